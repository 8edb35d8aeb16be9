/**
 * Reads what grafana/ ships: the dashboard JSON files, their panels and queries, and the
 * Prometheus rule files. Shared by the lint tests and the end-to-end test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CATALOGUE } from '../../src/serve/catalogue.js';
import { SESSION_GROUP_BY_ALLOWED } from '../../src/config/switches.js';
import { REPO_ROOT } from '../helpers/shared.js';

export const GRAFANA_DIR = join(REPO_ROOT, 'grafana');
export const DASHBOARDS_DIR = join(GRAFANA_DIR, 'dashboards');
export const RULES_DIR = join(GRAFANA_DIR, 'rules');
export const RULE_TESTS_DIR = join(RULES_DIR, 'tests');

/** A dashboard panel, as far as the tests read it. */
export interface PanelJson {
  id: number;
  type: string;
  title: string;
  description?: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type?: string; uid?: string };
  targets?: { refId: string; expr: string; datasource?: { type?: string; uid?: string } }[];
  fieldConfig?: { defaults?: { unit?: string; links?: { url: string }[] }; overrides?: unknown[] };
  panels?: PanelJson[];
}

export interface VariableJson {
  name: string;
  type: string;
  query?: unknown;
  definition?: string;
  multi?: boolean;
  includeAll?: boolean;
  allValue?: string;
  datasource?: { type?: string; uid?: string };
}

export interface DashboardJson {
  uid: string;
  title: string;
  description?: string;
  tags: string[];
  editable: boolean;
  links: { type: string; tags?: string[]; includeVars?: boolean; keepTime?: boolean }[];
  templating: { list: VariableJson[] };
  panels: PanelJson[];
  [key: string]: unknown;
}

export interface DashboardFileJson {
  readonly file: string;
  readonly text: string;
  readonly dashboard: DashboardJson;
}

export function dashboardFiles(): string[] {
  return readdirSync(DASHBOARDS_DIR).filter((f) => f.endsWith('.json')).sort();
}

export function loadDashboards(): DashboardFileJson[] {
  return dashboardFiles().map((file) => {
    const text = readFileSync(join(DASHBOARDS_DIR, file), 'utf8');
    return { file, text, dashboard: JSON.parse(text) as DashboardJson };
  });
}

/** Every panel, rows' nested panels included. */
export function allPanels(dashboard: DashboardJson): PanelJson[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

export interface PanelQuery {
  readonly dashboard: string;
  readonly panelId: number;
  readonly panelTitle: string;
  readonly refId: string;
  readonly expr: string;
}

/** "flussonic-fleet#7 Streams down/A": how a query is named in test messages and skip lists. */
export function queryName(q: Pick<PanelQuery, 'dashboard' | 'panelId' | 'panelTitle' | 'refId'>): string {
  return `${q.dashboard}#${q.panelId} ${q.panelTitle}/${q.refId}`;
}

export function panelQueries(dashboard: DashboardJson): PanelQuery[] {
  return allPanels(dashboard).flatMap((p) =>
    (p.targets ?? []).map((t) => ({ dashboard: dashboard.uid, panelId: p.id, panelTitle: p.title, refId: t.refId, expr: t.expr })),
  );
}

/** The query string of a query variable (Grafana stores it as a string or as { query }). */
export function variableQuery(v: VariableJson): string {
  if (typeof v.query === 'string') return v.query;
  if (v.query && typeof v.query === 'object' && 'query' in v.query) return String((v.query as { query: unknown }).query);
  return '';
}

// ---------------------------------------------------------------------------------------------
// Rules

export interface RuleJson {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleFileJson {
  readonly file: string;
  readonly path: string;
  readonly groups: { name: string; interval?: string; rules: RuleJson[] }[];
}

/** The rule files Prometheus loads: grafana/rules/*.yml (the tests/ subdirectory is not one). */
export function ruleFilePaths(): string[] {
  return readdirSync(RULES_DIR)
    .filter((f) => f.endsWith('.yml') || f.endsWith('.yaml'))
    .sort()
    .map((f) => join(RULES_DIR, f));
}

export function ruleTestPaths(): string[] {
  return readdirSync(RULE_TESTS_DIR)
    .filter((f) => f.endsWith('.yml') || f.endsWith('.yaml'))
    .sort()
    .map((f) => join(RULE_TESTS_DIR, f));
}

export function loadRuleFiles(): RuleFileJson[] {
  return ruleFilePaths().map((path) => {
    const doc = parseYaml(readFileSync(path, 'utf8')) as { groups: RuleFileJson['groups'] };
    return { file: path.slice(RULES_DIR.length + 1), path, groups: doc.groups };
  });
}

export function allRules(): RuleJson[] {
  return loadRuleFiles().flatMap((f) => f.groups.flatMap((g) => g.rules));
}

export function alertRules(): (RuleJson & { alert: string })[] {
  return allRules().filter((r): r is RuleJson & { alert: string } => typeof r.alert === 'string');
}

export function recordingRules(): (RuleJson & { record: string })[] {
  return allRules().filter((r): r is RuleJson & { record: string } => typeof r.record === 'string');
}

// ---------------------------------------------------------------------------------------------
// Metric names and their labels

/** Series Prometheus itself writes for every scrape target; queries may use them. */
export const PROMETHEUS_BUILTINS = new Set([
  'up',
  'scrape_duration_seconds',
  'scrape_samples_scraped',
  'scrape_samples_post_metric_relabeling',
  'scrape_series_added',
]);

const TARGET_LABELS = ['job', 'instance'];

/** Labels with an underscore in their name, which a recording rule's level names whole. */
const COMPOUND_LABELS = new Set(['stream_group']);

/**
 * The labels a recording rule keeps, from the level of its name (`level:metric:operation`):
 * `job_server_stream_group_stream:...` keeps job, server, stream_group and stream.
 */
export function levelLabels(record: string): string[] {
  const parts = record.split(':')[0]!.split('_');
  const labels: string[] = [];
  for (let i = 0; i < parts.length; i += 1) {
    const pair = `${parts[i]}_${parts[i + 1]}`;
    if (COMPOUND_LABELS.has(pair)) {
      labels.push(pair);
      i += 1;
    } else labels.push(parts[i]!);
  }
  return labels;
}

/**
 * The labels a metric name carries, or undefined for a name that is neither a catalogue family
 * (or a histogram's _bucket/_sum/_count), a recording rule of grafana/rules, nor a Prometheus
 * built-in. Recording rules carry the labels their level names (`job_server_stream:...`).
 */
export function labelsOfMetric(name: string, recordNames: ReadonlySet<string>): readonly string[] | undefined {
  const family = CATALOGUE.find((f) => f.name === name);
  if (family) {
    return [...TARGET_LABELS, ...family.labels, ...(family.groupByLabels ? SESSION_GROUP_BY_ALLOWED : [])];
  }
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const histogram = CATALOGUE.find((f) => f.type === 'histogram' && `${f.name}${suffix}` === name);
    if (histogram) return [...TARGET_LABELS, ...histogram.labels, ...(suffix === '_bucket' ? ['le'] : [])];
  }
  if (recordNames.has(name)) return levelLabels(name);
  if (PROMETHEUS_BUILTINS.has(name)) return TARGET_LABELS;
  return undefined;
}
