import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { findBinary, promtool } from '../helpers/promtool.js';
import {
  alertRules,
  GRAFANA_DIR,
  labelsOfMetric,
  levelLabels,
  loadRuleFiles,
  recordingRules,
  ruleFilePaths,
  ruleTestPaths,
} from './artifacts.js';
import { selectors } from './promql.js';

const promtoolPath = findBinary('promtool');
const RUNBOOK = readFileSync(join(GRAFANA_DIR, 'RUNBOOK.md'), 'utf8');

/** The alerts the rule files must define, by name. */
const REQUIRED_ALERTS = [
  'FlussonicExporterDown', // exporter target down
  'FlussonicServerUnreachable', // flussonic_up == 0
  'FlussonicCollectorFailing',
  'FlussonicStreamDown',
  'FlussonicStreamInputStalled',
  'FlussonicStreamInputErrors', // input errors / dropped packets sustained
  'FlussonicStreamOnBackupInput',
  'FlussonicStreamRestarting',
  'FlussonicTranscoderOverloaded',
  'FlussonicGpuTemperatureHigh',
  'FlussonicGpuEncoderSaturated',
  'FlussonicGpuDecoderSaturated',
  'FlussonicServerCpuHigh',
  'FlussonicServerSchedulerLoadHigh',
  'FlussonicPartitionNearlyFull',
  'FlussonicAudienceDrop',
  'FlussonicOperationsLogUnreachable',
];

interface AlertTestCase {
  alertname: string;
  eval_time: string;
  exp_alerts?: { exp_labels?: Record<string, string>; exp_annotations?: Record<string, string> }[];
}

function alertTestCases(): (AlertTestCase & { file: string })[] {
  return ruleTestPaths().flatMap((path) => {
    const doc = parseYaml(readFileSync(path, 'utf8')) as { tests?: { alert_rule_test?: AlertTestCase[] }[] };
    return (doc.tests ?? []).flatMap((t) => (t.alert_rule_test ?? []).map((c) => ({ ...c, file: path })));
  });
}

/** The sections of RUNBOOK.md: `## Name` headings and the `###` subsections under each. */
function runbookSections(): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of RUNBOOK.split('\n')) {
    const h2 = /^## (.+)$/.exec(line);
    const h3 = /^### (.+)$/.exec(line);
    if (h2) {
      current = [];
      sections.set(h2[1]!.trim(), current);
    } else if (h3 && current) {
      current.push(h3[1]!.trim());
    }
  }
  return sections;
}

/** GitHub's anchor for a heading: lower case, spaces to dashes, punctuation dropped. */
function anchorOf(heading: string): string {
  return heading.toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');
}

describe('Prometheus rule files', () => {
  it('are one file per area, each with groups of rules', () => {
    const files = loadRuleFiles();
    expect(files.map((f) => f.file)).toEqual([
      'flussonic-audience.rules.yml',
      'flussonic-catena.rules.yml',
      'flussonic-exporter.rules.yml',
      'flussonic-server.rules.yml',
      'flussonic-slo.rules.yml',
      'flussonic-streams.rules.yml',
    ]);
    for (const f of files) expect(f.groups.length, f.file).toBeGreaterThan(0);
  });

  it.skipIf(!promtoolPath)('pass promtool check rules', () => {
    for (const path of ruleFilePaths()) {
      const r = promtool(promtoolPath!, ['check', 'rules', path]);
      expect(r.status, `${path}\n${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout + r.stderr, path).not.toMatch(/WARN|FAILED/i);
    }
  });

  // The audience test spans a week of data: a few seconds, more on a loaded machine.
  it.skipIf(!promtoolPath)('pass their promtool unit tests', { timeout: 60_000 }, () => {
    const tests = ruleTestPaths();
    expect(tests.length).toBeGreaterThan(0);
    const r = promtool(promtoolPath!, ['test', 'rules', ...tests]);
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });

  it('have unique alert and record names', () => {
    const alerts = alertRules().map((r) => r.alert);
    const records = recordingRules().map((r) => r.record);
    expect(new Set(alerts).size).toBe(alerts.length);
    expect(new Set(records).size).toBe(records.length);
  });

  it('name recording rules level:metric:operation, with a level of the labels they keep', () => {
    for (const { record, expr } of recordingRules()) {
      expect(record, record).toMatch(/^[a-z]+(_[a-z]+)*:flussonic_[a-z_]+:[a-z0-9]+$/);
      const level = levelLabels(record);
      const grouping = /^\s*(sum|max|min|count|avg) by \(([^)]*)\)/.exec(expr);
      if (grouping) expect(grouping[2]!.split(',').map((l) => l.trim()), record).toEqual(level);
    }
  });

  it('use only metrics of the catalogue, their own recording rules, or Prometheus built-ins', () => {
    const records = new Set(recordingRules().map((r) => r.record));
    for (const rule of [...recordingRules(), ...alertRules()]) {
      for (const { metric } of selectors(rule.expr)) {
        expect(labelsOfMetric(metric, records), `${rule.record ?? rule.alert}: ${metric}`).toBeDefined();
      }
    }
  });
});

describe('Alerts', () => {
  it('include every alert the issue lists', () => {
    const names = new Set(alertRules().map((r) => r.alert));
    for (const name of REQUIRED_ALERTS) expect(names.has(name), name).toBe(true);
  });

  it('each have a severity, a summary, a description and a runbook_url', () => {
    for (const rule of alertRules()) {
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels?.severity);
      for (const key of ['summary', 'description', 'runbook_url']) {
        expect(rule.annotations?.[key]?.trim(), `${rule.alert} ${key}`).toBeTruthy();
      }
    }
  });

  it('link to their own section of RUNBOOK.md, which says meaning, impact, diagnosis and mitigation', () => {
    const sections = runbookSections();
    for (const rule of alertRules()) {
      expect(rule.annotations?.runbook_url, rule.alert).toBe(`grafana/RUNBOOK.md#${anchorOf(rule.alert)}`);
      expect(sections.get(rule.alert), `RUNBOOK.md has no "## ${rule.alert}"`).toEqual(['Meaning', 'Impact', 'Diagnosis', 'Mitigation']);
    }
  });

  it('are all in the runbook, and the runbook has no section for an alert that does not exist', () => {
    const names = new Set(alertRules().map((r) => r.alert));
    const documented = [...runbookSections().keys()];
    expect(documented.filter((s) => !names.has(s))).toEqual([]);
    expect([...names].filter((n) => !documented.includes(n))).toEqual([]);
  });

  it('each have a unit test where they fire with their labels and annotations, and one where they must not', () => {
    const cases = alertTestCases();
    const missing: string[] = [];
    for (const rule of alertRules()) {
      const own = cases.filter((c) => c.alertname === rule.alert);
      const firing = own.filter((c) => (c.exp_alerts ?? []).length > 0);
      const quiet = own.filter((c) => (c.exp_alerts ?? []).length === 0);
      if (firing.length === 0) missing.push(`${rule.alert}: no test case where it fires`);
      if (quiet.length === 0) missing.push(`${rule.alert}: no test case where it must not fire`);
      for (const c of firing) {
        for (const alert of c.exp_alerts ?? []) {
          if (alert.exp_labels?.severity !== rule.labels?.severity) missing.push(`${rule.alert}@${c.eval_time}: exp_labels.severity`);
          for (const key of ['summary', 'description', 'runbook_url']) {
            if (!alert.exp_annotations?.[key]) missing.push(`${rule.alert}@${c.eval_time}: exp_annotations.${key}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('test cases only name alerts that exist', () => {
    const names = new Set(alertRules().map((r) => r.alert));
    expect(alertTestCases().filter((c) => !names.has(c.alertname)).map((c) => `${c.file}: ${c.alertname}`)).toEqual([]);
  });
});
