/**
 * End to end, once per stats shape of the demo (--demo-shape nested: Flussonic 2025 and later;
 * flat: 23.x/24.x): the exporter in the demo's full tour (--demo-full, every switch on), scraped every second by a real Prometheus that
 * loads grafana/rules; every panel query of every dashboard is evaluated through Prometheus' HTTP
 * API with real variable values, as Grafana would send it, and every alert is checked for whether
 * the series it needs exist on that shape. Each shape prints its figures and every empty query
 * with its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinary } from '../helpers/promtool.js';
import { alertRules, loadDashboards, loadRuleFiles, panelQueries, RULES_DIR, type PanelQuery } from './artifacts.js';
import { alertCoverage } from './coverage.js';
import { demoMode, resultSize, startDemoStack, waitForScrapesAndRules, type DemoStack, type PrometheusApi } from './harness.js';
import { substituteVariables } from './promql.js';
import { variableValues } from './variables.js';

const JOB = 'flussonic-exporter';
const SHAPES = ['nested', 'flat'] as const;
type Shape = (typeof SHAPES)[number];

/**
 * Windows for Grafana's interval variables. Prometheus scrapes every second, so
 * $__rate_interval is 4 scrapes, as Grafana computes it (4 x the scrape interval at least).
 */
const INTERVALS = { __rate_interval: '4s', __interval: '2s', __range: '1m' };

/** Scrapes of the exporter to wait for before querying (rates need a few samples). */
const SCRAPES = 10;

/**
 * Panels (at least one query with data) each shape must show: today's figures, so that a panel
 * that loses its data fails here even where the list below would excuse it. Raise them when
 * panels gain data; lower them only with a reason.
 */
const PANELS_WITH_DATA_FLOOR: Readonly<Record<Shape, number>> = { nested: 111, flat: 102 };

const FLAT_ONLY = 'a field of the flat (23.x/24.x) stats shape that the 2025 shape does not report';
const NESTED_ONLY = 'a field of the 2025 stats shape (stats.input.*, stats.transcoder.*) that 23.x/24.x servers do not report';

/**
 * Panel queries that are legitimately empty ("<dashboard uid>: <panel title> / <refId>"), on which
 * shapes, and why. Any other query must return data; a query listed here for a shape that does
 * return data on it fails too, so the list cannot go stale.
 */
const EMPTY_IN_DEMO: Readonly<Record<string, { readonly shapes: readonly Shape[]; readonly reason: string }>> = {
  // The demo's simulator posts its events to the exporter, but a source drop is rare in its churn.
  'flussonic-fleet: Most flapping streams / A': { shapes: ['nested', 'flat'], reason: 'no source was lost in the test\'s short window' },
  'flussonic-audience: Sessions by server, now and a week ago / B': {
    shapes: ['nested', 'flat'],
    reason: 'compares with a week ago: a Prometheus started seconds ago holds no data from then',
  },
  'flussonic-stream: Bitrate in and out / B': { shapes: ['nested'], reason: `stats.output_bitrate: ${FLAT_ONLY}` },
  'flussonic-fleet: Most input errors / A': { shapes: ['flat'], reason: `stats.input.errors_*: ${NESTED_ONLY}` },
  'flussonic-stream: Input errors by kind / A': { shapes: ['flat'], reason: `stats.input.errors_*: ${NESTED_ONLY}` },
  'flussonic-stream: Input restarts and switches / B': { shapes: ['flat'], reason: `stats.input.input_switches: ${NESTED_ONLY}` },
  ...Object.fromEntries(
    [
      'flussonic-stream: Transcoder / A',
      'flussonic-stream: Transcoder / B',
      'flussonic-stream: Transcoder restarts / A',
      'flussonic-stream: Transcoder frames / A',
      'flussonic-stream: Transcoder frames / B',
      'flussonic-stream: Transcoder frames / C',
      'flussonic-transcoders: Transcoded frames / A',
      'flussonic-transcoders: Dropped and duplicated frames / A',
      'flussonic-transcoders: Dropped and duplicated frames / B',
      'flussonic-transcoders: Transcoder restarts / A',
      'flussonic-transcoders: Transcoders per device kind / A',
    ].map((query) => [query, { shapes: ['flat'] as const, reason: `stats.transcoder: ${NESTED_ONLY}` }]),
  ),
};

/**
 * Alerts that cannot fire on a shape because a series they need does not exist there, and why.
 * Any other alert must be able to fire; one listed here that can fails too (remove it).
 */
const CANNOT_FIRE: Readonly<Record<string, { readonly shapes: readonly Shape[]; readonly reason: string }>> = {
  // Counters of failures the demo does not have: a labelled counter has no series before its first count.
  FlussonicExporterSeriesShed: { shapes: SHAPES, reason: 'the demo stays under max_series, so no family is shed' },
  FlussonicDiscoveryFailing: { shapes: SHAPES, reason: 'the demo has no discovery source' },
};

function key(q: Pick<PanelQuery, 'dashboard' | 'panelTitle' | 'refId'>): string {
  return `${q.dashboard}: ${q.panelTitle} / ${q.refId}`;
}

const prometheusPath = findBinary('prometheus');
const demo = demoMode();
if (!demo.ok) console.warn(`skipping the Grafana end-to-end test: ${demo.reason}`);

/** Why a query is empty by design on a shape, or undefined when it must return data. */
function excuse(q: PanelQuery, shape: Shape): string | undefined {
  const listed = EMPTY_IN_DEMO[key(q)];
  return listed?.shapes.includes(shape) ? listed.reason : undefined;
}

for (const shape of SHAPES) {
  describe.skipIf(!prometheusPath || !demo.ok)(`dashboards and rules against a real Prometheus scraping the demo (${shape} stats shape)`, () => {
    let stack: DemoStack | undefined;
    let api: PrometheusApi;

    beforeAll(async () => {
      if (!demo.ok) return;
      // The full tour: every collector and family switch on (demo-defaults.test.ts runs --demo alone).
      stack = await startDemoStack(demo.main, prometheusPath!, shape, JOB, `${RULES_DIR}/*.rules.yml`, ['--demo-full']);
      api = stack.api;
      await waitForScrapesAndRules(api, JOB, SCRAPES);
    }, 60_000);

    afterAll(async () => {
      await stack?.stop();
    }, 20_000);

    it('loads every rule group of grafana/rules and evaluates every rule without error', async () => {
      const r = await api.get<{ groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules');
      expect(r.status).toBe('success');
      const expected = loadRuleFiles().flatMap((f) => f.groups.map((g) => g.name)).sort();
      expect(r.data.groups.map((g) => g.name).sort()).toEqual(expected);
      const unhealthy = r.data.groups.flatMap((g) => g.rules.filter((rule) => rule.health !== 'ok').map((rule) => `${g.name}/${rule.name}: ${rule.health} ${rule.lastError ?? ''}`));
      expect(unhealthy).toEqual([]);
    });

    it('puts relabelled streams in their stream group and the others in "default" (stream SLOs)', async () => {
      const groups = await api.labelValues('job_server_stream_group_stream:flussonic_stream_unavailable:bool', 'stream_group');
      expect(groups).toEqual(['cameras', 'default']);
    });

    it('answers every panel query, with data unless excused; prints every empty one with its reason', async () => {
      const dashboards = loadDashboards().map((d) => d.dashboard);
      const failures: string[] = [];
      const empty: string[] = [];
      const panels = new Map<string, boolean>();
      let total = 0;
      let withData = 0;
      for (const dashboard of dashboards) {
        const values = await variableValues(api, dashboard, INTERVALS);
        for (const q of panelQueries(dashboard)) {
          total += 1;
          const expr = substituteVariables(q.expr, values);
          const r = await api.query(expr);
          const panel = `${q.dashboard}#${q.panelId}`;
          if (r.status !== 'success') {
            failures.push(`${key(q)}: ${r.errorType}: ${r.error}\n    ${expr}`);
            continue;
          }
          const hasData = resultSize(r.data) > 0;
          panels.set(panel, (panels.get(panel) ?? false) || hasData);
          const reason = excuse(q, shape);
          if (hasData) withData += 1;
          else empty.push(`  ${key(q)}: ${reason ?? 'NO REASON'}`);
          if (hasData && reason !== undefined) failures.push(`${key(q)}: returns data on ${shape} although excused ("${reason}"): remove the excuse`);
          if (!hasData && reason === undefined) failures.push(`${key(q)}: no data on ${shape}\n    ${expr}`);
        }
      }
      for (const [listed, { shapes }] of Object.entries(EMPTY_IN_DEMO)) {
        if (!shapes.includes(shape)) continue;
        if (!dashboards.some((d) => panelQueries(d).some((q) => key(q) === listed))) failures.push(`${listed}: listed as empty but no such query`);
      }
      const panelsWithData = [...panels.values()].filter(Boolean).length;
      console.log(
        `Grafana e2e (${shape}): panels with data ${panelsWithData} / ${panels.size}; queries with data ${withData} / ${total}; ` +
          `empty queries:\n${empty.join('\n') || '  none'}`,
      );
      expect(failures).toEqual([]);
      expect(panelsWithData).toBeGreaterThanOrEqual(PANELS_WITH_DATA_FLOOR[shape]);
    }, 30_000);

    it('counts the alerts that can fire on this shape (every series their expression needs exists)', async () => {
      const present = new Set(await api.labelValues(`{job="${JOB}"}`, '__name__'));
      const coverage = alertRules().map((rule) => alertCoverage(rule.alert, rule.expr, present));
      const blind = coverage.filter((c) => !c.canFire);
      const excused = (alert: string): string | undefined => {
        const listed = CANNOT_FIRE[alert];
        return listed?.shapes.includes(shape) ? listed.reason : undefined;
      };
      console.log(
        `Grafana e2e (${shape}): alerts that can fire ${coverage.length - blind.length} / ${coverage.length}` +
          (blind.length ? `; cannot fire:\n${blind.map((c) => `  ${c.alert}: no ${c.missing.join(', ')}: ${excused(c.alert) ?? 'NO REASON'}`).join('\n')}` : ''),
      );
      expect(coverage.length).toBeGreaterThan(0);
      expect(blind.filter((c) => excused(c.alert) === undefined).map((c) => `${c.alert}: needs ${c.missing.join(', ')}`)).toEqual([]);
      expect(coverage.filter((c) => c.canFire && excused(c.alert) !== undefined).map((c) => `${c.alert} can fire on ${shape}: remove it from CANNOT_FIRE`)).toEqual([]);
    });
  });
}
