/**
 * deploy/kubernetes/prometheus-rule.yaml has one source of truth, grafana/rules/*.yml: the
 * committed file equals a fresh `npm run deploy:rules`, holds every group of every rule file
 * unchanged, validates as a PrometheusRule and passes `promtool check rules`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, test } from 'vitest';
import { findBinary, promtool } from '../helpers/promtool.js';
import { REPO_ROOT } from '../helpers/shared.js';
import { KUBERNETES_DIR, parseObjects, single, validateObject } from './manifests.js';

const SCRIPT = join(REPO_ROOT, 'scripts', 'write-prometheus-rule.mjs');
const RULES_DIR = join(REPO_ROOT, 'grafana', 'rules');
const COMMITTED = join(KUBERNETES_DIR, 'prometheus-rule.yaml');

const dir = mkdtempSync(join(tmpdir(), 'deploy-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function generate(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, '--stdout', ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface RuleGroup {
  name: string;
  rules: unknown[];
}

function committedRule(): { spec: { groups: RuleGroup[] } } {
  const rule = single(parseObjects(readFileSync(COMMITTED, 'utf8'), 'prometheus-rule.yaml'), 'PrometheusRule');
  return rule as unknown as { spec: { groups: RuleGroup[] } };
}

describe('deploy/kubernetes/prometheus-rule.yaml', () => {
  test('equals a fresh generation from grafana/rules', () => {
    const fresh = generate();
    expect(fresh.stderr).toBe('');
    expect(fresh.status).toBe(0);
    const committed = readFileSync(COMMITTED, 'utf8');
    expect(committed === fresh.stdout, 'prometheus-rule.yaml is stale: run `npm run deploy:rules` and commit it').toBe(true);
  });

  test('holds every group of every rule file, unchanged, and nothing else', () => {
    const files = readdirSync(RULES_DIR).filter((f) => f.endsWith('.yml')).sort();
    expect(files.length).toBeGreaterThan(0);
    const expected = files.flatMap((f) => (parse(readFileSync(join(RULES_DIR, f), 'utf8')) as { groups: RuleGroup[] }).groups);
    expect(committedRule().spec.groups).toEqual(expected);
  });

  test('validates as a PrometheusRule', () => {
    const rule = single(parseObjects(readFileSync(COMMITTED, 'utf8'), 'prometheus-rule.yaml'), 'PrometheusRule');
    validateObject(rule, 'prometheus-rule.yaml');
  });

  const promtoolPath = findBinary('promtool');
  test.runIf(promtoolPath)('its groups pass promtool check rules', () => {
    const path = join(dir, 'groups.yml');
    writeFileSync(path, stringify({ groups: committedRule().spec.groups }, { lineWidth: 0 }));
    const result = promtool(promtoolPath!, ['check', 'rules', path]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });
});

describe('scripts/write-prometheus-rule.mjs', () => {
  test('refuses a group name defined twice, naming both files', () => {
    const rules = mkdtempSync(join(dir, 'dup-'));
    writeFileSync(join(rules, 'a.yml'), 'groups:\n  - name: same\n    rules:\n      - record: a:x\n        expr: vector(1)\n');
    writeFileSync(join(rules, 'b.yml'), 'groups:\n  - name: same\n    rules:\n      - record: b:x\n        expr: vector(2)\n');
    const result = generate('--rules-dir', rules);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/b\.yml: group "same" is already defined in .*a\.yml/);
  });

  test('refuses a file that is not a rule file, naming it', () => {
    const rules = mkdtempSync(join(dir, 'bad-'));
    writeFileSync(join(rules, 'broken.yml'), 'groups: [\n');
    expect(generate('--rules-dir', rules).stderr).toMatch(/broken\.yml: not valid YAML/);
    writeFileSync(join(rules, 'broken.yml'), 'rules: []\n');
    expect(generate('--rules-dir', rules).stderr).toMatch(/broken\.yml: expected a top-level "groups:" list/);
  });
});
