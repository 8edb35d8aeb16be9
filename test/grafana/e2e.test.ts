/**
 * End to end: the exporter in demo mode, scraped every second by a real Prometheus that loads
 * grafana/rules; every panel query of every dashboard is evaluated through Prometheus' HTTP API
 * with real variable values, as Grafana would send it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { findBinary } from '../helpers/promtool.js';
import {
  labelsOfMetric,
  loadDashboards,
  loadRuleFiles,
  panelQueries,
  recordingRules,
  RULES_DIR,
  variableQuery,
  type DashboardJson,
  type PanelQuery,
} from './artifacts.js';
import {
  demoMode,
  freePort,
  PrometheusApi,
  resultSize,
  spawnLogged,
  stopProcess,
  waitFor,
  type Spawned,
} from './harness.js';
import { labelValuesQuery, promqlRegexOf, selectors, substituteVariables } from './promql.js';

const JOB = 'flussonic-exporter';

/**
 * Windows for Grafana's interval variables. Prometheus scrapes every second, so
 * $__rate_interval is 4 scrapes, as Grafana computes it (4 x the scrape interval at least).
 */
const INTERVALS = { __rate_interval: '4s', __interval: '2s', __range: '1m' };

const RETRIES_2025 =
  'the demo simulates the 2025 stats shape, which has no stats.retry_count, the only source of ' +
  'flussonic_stream_retries_total in the streams collector (older servers report it)';

/**
 * Panel queries that are legitimately empty in demo mode, with the reason
 * ("<dashboard uid>: <panel title> / <refId>"). Any other query must return data; a query listed
 * here that does return data fails too, so the list cannot go stale.
 */
const EMPTY_IN_DEMO: Readonly<Record<string, string>> = {
  'flussonic-audience: Sessions by server, now and a week ago / B':
    'compares with a week ago: a Prometheus started seconds ago holds no data from then',
  'flussonic-stream: Bitrate in and out / B':
    'the demo simulates the 2025 stats shape, which has no stats.output_bitrate (older servers report it)',
  'flussonic-stream: Input retries and switches / A': RETRIES_2025,
  'flussonic-fleet: Most input retries / A': RETRIES_2025,
};

/** Scrapes of the exporter to wait for before querying (rates need a few samples). */
const SCRAPES = 10;

function key(q: Pick<PanelQuery, 'dashboard' | 'panelTitle' | 'refId'>): string {
  return `${q.dashboard}: ${q.panelTitle} / ${q.refId}`;
}

const prometheusPath = findBinary('prometheus');
const demo = demoMode();
if (!demo.ok) console.warn(`skipping the Grafana end-to-end test: ${demo.reason}`);

describe.skipIf(!prometheusPath || !demo.ok)('dashboards and rules against a real Prometheus scraping the demo exporter', () => {
  let dir = '';
  let exporter: Spawned | undefined;
  let prometheus: Spawned | undefined;
  let api: PrometheusApi;

  beforeAll(async () => {
    if (!demo.ok) return;
    dir = mkdtempSync(join(tmpdir(), 'flussonic-grafana-e2e-'));
    const exporterPort = await freePort();
    exporter = spawnLogged('exporter', process.execPath, [demo.main, '--demo', '--listen-address', `127.0.0.1:${exporterPort}`, '--log-level', 'warn']);
    await waitFor('the demo exporter to serve flussonic_up', 20_000, async () => {
      if (exporter!.child.exitCode !== null) throw new Error(`the exporter exited: ${exporter!.output()}`);
      const r = await fetch(`http://127.0.0.1:${exporterPort}/metrics`, { signal: AbortSignal.timeout(2000) });
      const text = await r.text();
      return r.ok && /^flussonic_up\{/m.test(text) ? true : undefined;
    });

    const prometheusPort = await freePort();
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: [join(RULES_DIR, '*.rules.yml')],
      scrape_configs: [{ job_name: JOB, static_configs: [{ targets: [`127.0.0.1:${exporterPort}`] }] }],
    };
    writeFileSync(join(dir, 'prometheus.yml'), stringifyYaml(config));
    mkdirSync(join(dir, 'data'));
    prometheus = spawnLogged('prometheus', prometheusPath!, [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
      '--log.level=warn',
    ]);
    api = new PrometheusApi(`http://127.0.0.1:${prometheusPort}`);
    await waitFor('Prometheus to be ready', 20_000, async () => {
      if (prometheus!.child.exitCode !== null) throw new Error(`prometheus exited: ${prometheus!.output()}`);
      const r = await fetch(`${api.baseUrl}/-/ready`, { signal: AbortSignal.timeout(2000) });
      return r.ok ? true : undefined;
    });
    await waitFor(`${SCRAPES} scrapes of the exporter and the recording rules evaluated`, 30_000, async () => {
      const scrapes = await api.query(`count_over_time(up{job="${JOB}"}[1m])`);
      const recorded = await api.query('job_server:flussonic_streams:count');
      if (scrapes.status !== 'success' || recorded.status !== 'success') return undefined;
      const n = scrapes.data.resultType === 'vector' ? Number(scrapes.data.result[0]?.value[1] ?? 0) : 0;
      return n >= SCRAPES && resultSize(recorded.data) > 0 ? true : undefined;
    });
  }, 90_000);

  afterAll(async () => {
    await stopProcess(prometheus);
    await stopProcess(exporter);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 20_000);

  it('loads every rule group of grafana/rules and evaluates every rule without error', async () => {
    const r = await api.get<{ groups: { name: string; file: string; rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules');
    expect(r.status).toBe('success');
    const expected = loadRuleFiles().flatMap((f) => f.groups.map((g) => g.name)).sort();
    expect(r.data.groups.map((g) => g.name).sort()).toEqual(expected);
    const unhealthy = r.data.groups.flatMap((g) => g.rules.filter((rule) => rule.health !== 'ok').map((rule) => `${g.name}/${rule.name}: ${rule.health} ${rule.lastError ?? ''}`));
    expect(unhealthy).toEqual([]);
  });

  it('answers every panel query of every dashboard, with data unless listed as empty in demo mode', async () => {
    const dashboards = loadDashboards().map((d) => d.dashboard);
    const failures: string[] = [];
    let total = 0;
    let withData = 0;
    let emptyAsExpected = 0;
    for (const dashboard of dashboards) {
      const values = await variableValues(api, dashboard);
      for (const q of panelQueries(dashboard)) {
        total += 1;
        const expr = substituteVariables(q.expr, values);
        const r = await api.query(expr);
        if (r.status !== 'success') {
          failures.push(`${key(q)}: ${r.errorType}: ${r.error}\n    ${expr}`);
          continue;
        }
        const hasData = resultSize(r.data) > 0;
        const excuse = EMPTY_IN_DEMO[key(q)];
        if (hasData && excuse === undefined) withData += 1;
        else if (!hasData && excuse !== undefined) emptyAsExpected += 1;
        else if (hasData) failures.push(`${key(q)}: returns data although listed as empty in demo mode ("${excuse}"): remove it from the list`);
        else failures.push(`${key(q)}: no data\n    ${expr}`);
      }
    }
    for (const listed of Object.keys(EMPTY_IN_DEMO)) {
      if (!dashboards.some((d) => panelQueries(d).some((q) => key(q) === listed))) failures.push(`${listed}: listed as empty but no such query`);
    }
    console.log(`Grafana e2e: ${total} panel queries; ${withData} returned data; ${emptyAsExpected} empty as listed for demo mode`);
    expect(failures).toEqual([]);
  }, 60_000);
});

/**
 * Real values for the variables of a dashboard, found as Grafana finds them: each variable's
 * label_values() query with the variables before it filled in. Every value is selected (like
 * All, but spelled out), except stream: a few real streams, one for each stream-level family the
 * dashboard shows (so that the transcoder, DVR and track panels each have a stream with data).
 */
async function variableValues(api: PrometheusApi, dashboard: DashboardJson): Promise<Record<string, string>> {
  const values: Record<string, string> = { ...INTERVALS };
  for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) {
    const { selector, label } = labelValuesQuery(variableQuery(v));
    const options = await api.labelValues(substituteVariables(selector, values), label);
    if (options.length === 0) throw new Error(`${dashboard.uid}: $${v.name} has no values (${selector})`);
    const chosen = v.name === 'stream' ? await representativeStreams(api, dashboard, values, options) : options;
    values[v.name] = promqlRegexOf(chosen);
  }
  return values;
}

async function representativeStreams(
  api: PrometheusApi,
  dashboard: DashboardJson,
  values: Record<string, string>,
  options: string[],
): Promise<string[]> {
  const records = new Set(recordingRules().map((r) => r.record));
  const families = new Set(
    panelQueries(dashboard)
      .flatMap((q) => selectors(q.expr))
      .map((s) => s.metric)
      .filter((m) => labelsOfMetric(m, records)?.includes('stream')),
  );
  const chosen = new Set<string>([options[0]!]);
  for (const family of [...families].sort()) {
    const matching = await api.labelValues(`${family}{job=~"${values.job}",server=~"${values.server}"}`, 'stream');
    if (matching.length > 0 && !matching.some((s) => chosen.has(s))) chosen.add(matching[0]!);
  }
  return [...chosen].sort();
}
