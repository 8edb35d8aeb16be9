/**
 * The alert rules' job selector is configurable (scripts/write-rules.mjs, monitoring-mixin style):
 * the committed rule files are the templates of grafana/mixin with the default selector, and a
 * user's selector gives rules that select only their job, pass promtool and still fire.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { findBinary, promtool } from '../helpers/promtool.js';
import { REPO_ROOT } from '../helpers/shared.js';

const SCRIPT = join(REPO_ROOT, 'scripts', 'write-rules.mjs');
const promtoolPath = findBinary('promtool');
const dir = mkdtempSync(join(tmpdir(), 'rules-selector-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } });
}

const exprs = (path: string) =>
  (parse(readFileSync(path, 'utf8')) as { groups: { rules: { alert?: string; expr: string }[] }[] }).groups.flatMap((g) => g.rules);

describe('the rules selector', () => {
  it('the committed rule files are the templates with the default selector', () => {
    const r = run(['--check']);
    expect(r.status, r.stderr).toBe(0);
    const rules = exprs(join(REPO_ROOT, 'grafana', 'rules', 'flussonic-exporter.rules.yml'));
    expect(rules.find((r) => r.alert === 'FlussonicExporterDown')?.expr).toContain('up{job=~".*flussonic.*"}');
    expect(rules.find((r) => r.alert === 'FlussonicExporterAbsent')?.expr).toBe('absent(up{job=~".*flussonic.*"})');
  });

  it('writes the rules with a selector given by flag or environment', () => {
    const out = join(dir, 'flag');
    expect(run(['--selector', 'job="fe",namespace="monitoring"', '--out', out]).status).toBe(0);
    const text = readFileSync(join(out, 'flussonic-exporter.rules.yml'), 'utf8');
    expect(text).not.toContain('%(selector)s');
    expect(text).not.toContain('.*flussonic.*');
    expect(exprs(join(out, 'flussonic-exporter.rules.yml')).find((r) => r.alert === 'FlussonicExporterAbsent')?.expr).toBe('absent(up{job="fe",namespace="monitoring"})');
    const viaEnv = join(dir, 'env');
    expect(run(['--out', viaEnv], { FLUSSONIC_RULES_SELECTOR: 'job="fe"' }).status).toBe(0);
    expect(readFileSync(join(viaEnv, 'flussonic-exporter.rules.yml'), 'utf8')).toContain('up{job="fe"} == 0');
  });

  it('refuses what is not a label selector, saying what it expects', () => {
    for (const bad of ['job=fe', 'job="fe"} or vector(1', '', 'job="a" # x']) {
      const r = run(['--selector', bad, '--out', join(dir, 'bad')]);
      expect(r.status, bad).toBe(2);
      expect(r.stderr).toMatch(/--selector: expected PromQL label matchers/);
    }
  });

  it.skipIf(!promtoolPath)('gives rules that pass promtool and fire only for the chosen job', () => {
    const out = join(dir, 'promtool');
    expect(run(['--selector', 'job="fe"', '--out', out]).status).toBe(0);
    const rules = join(out, 'flussonic-exporter.rules.yml');
    const check = promtool(promtoolPath!, ['check', 'rules', rules]);
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const test = join(out, 'selector.test.yml');
    writeFileSync(
      test,
      `rule_files: [flussonic-exporter.rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'up{job="flussonic",instance="a:9228"}'
        values: '0x20'
      - series: 'up{job="fe",instance="b:9228"}'
        values: '0x20'
    alert_rule_test:
      - eval_time: 10m
        alertname: FlussonicExporterDown
        exp_alerts:
          - exp_labels: {severity: critical, job: fe, instance: "b:9228"}
            exp_annotations:
              summary: "flussonic-exporter b:9228 is down"
              description: "Prometheus has failed to scrape flussonic-exporter b:9228 (job fe) for 2 minutes: no Flussonic or Catena metrics arrive from it."
              runbook_url: grafana/RUNBOOK.md#flussonicexporterdown
  - interval: 1m
    input_series:
      - series: 'up{job="flussonic",instance="a:9228"}'
        values: '1x30'
    alert_rule_test:
      - eval_time: 25m
        alertname: FlussonicExporterAbsent
        exp_alerts:
          - exp_labels: {severity: critical, job: fe}
            exp_annotations:
              summary: "No flussonic-exporter target is scraped"
              description: "Prometheus has had no scrape target of flussonic-exporter (the rules' selector) for 10 minutes: no Flussonic or Catena metrics arrive, and no other Flussonic alert can fire."
              runbook_url: grafana/RUNBOOK.md#flussonicexporterabsent
`,
    );
    const r = promtool(promtoolPath!, ['test', 'rules', test]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });
});
