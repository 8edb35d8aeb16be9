import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { buildDashboards, renderDashboard } from '../../grafana/generator/index.js';
import { FAMILY_TIERS } from '../../src/serve/catalogue.js';
import { findBinary, promtool } from '../helpers/promtool.js';
import {
  allPanels,
  dashboardFiles,
  GRAFANA_DIR,
  labelsOfMetric,
  loadDashboards,
  panelQueries,
  queryName,
  recordingRules,
  variableQuery,
  type DashboardJson,
  type PanelJson,
  type VariableJson,
} from './artifacts.js';
import { labelValuesQuery, rangeWindows, selectors, substituteVariables } from './promql.js';

const promtoolPath = findBinary('promtool');
const dashboards = loadDashboards();
const recordNames = new Set(recordingRules().map((r) => r.record));

/** The dashboards the issue asks for, by their stable uid, and the variables that filter each. */
const EXPECTED: Record<string, { filters: string[] }> = {
  'flussonic-fleet': { filters: ['job', 'server'] },
  'flussonic-stream': { filters: ['job', 'server', 'stream'] },
  'flussonic-audience': { filters: ['job', 'server', 'stream'] },
  'flussonic-transcoders': { filters: ['job', 'server', 'stream'] },
  'flussonic-catena': { filters: ['job', 'catena', 'portal'] },
  'flussonic-exporter': { filters: ['job', 'server'] },
  'flussonic-slo': { filters: ['job', 'server', 'stream_group'] },
};

/** Grafana unit ids the dashboards may use (from Grafana's valueFormats categories). */
const GRAFANA_UNITS = new Set([
  'none', 'short', 'percentunit', 'Bps', 'bytes', 'decbytes', 's', 'dtdurations', 'celsius',
  'reqps', 'ops', 'cps', 'cpm', 'opm', 'pps', 'dateTimeFromNow', 'hertz',
]);

/** Values that make every query a valid PromQL expression, for promtool. */
const PARSE_VALUES = {
  __rate_interval: '1m',
  __interval: '30s',
  __range: '1h',
  job: '.*',
  server: '.*',
  stream: '.*',
  catena: '.*',
  portal: '.*',
  stream_group: '.*',
};

function each<T>(fn: (d: DashboardJson) => T[]): T[] {
  return dashboards.flatMap(({ dashboard }) => fn(dashboard));
}

describe('Dashboard files', () => {
  it('are the seven dashboards, each with its stable uid', () => {
    expect(dashboards.map((d) => d.dashboard.uid).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const { file, dashboard } of dashboards) expect(file).toBe(`${dashboard.uid}.json`);
  });

  it('are exactly what the generator writes (regenerate: see grafana/README.md)', () => {
    const generated = buildDashboards();
    expect(generated.map((g) => g.file).sort()).toEqual(dashboardFiles());
    for (const { file, dashboard } of generated) {
      expect(readFileSync(join(GRAFANA_DIR, 'dashboards', file), 'utf8'), file).toBe(renderDashboard(dashboard));
    }
  });

  it('are provisioning-ready models: no numeric id, a title, a description, tags with "flussonic", not editable', () => {
    for (const { dashboard } of dashboards) {
      expect(dashboard.id ?? null, dashboard.uid).toBeNull();
      expect(dashboard.title, dashboard.uid).toMatch(/^Flussonic \/ /);
      expect(dashboard.description?.trim(), dashboard.uid).toBeTruthy();
      expect(dashboard.tags, dashboard.uid).toContain('flussonic');
      expect(dashboard.editable, dashboard.uid).toBe(false);
      expect(dashboard.schemaVersion, dashboard.uid).toBeGreaterThanOrEqual(36);
      expect(dashboard.uid.length, dashboard.uid).toBeLessThanOrEqual(40);
    }
  });

  it('link to each other through their common tag, keeping variables and time range', () => {
    for (const { dashboard } of dashboards) {
      expect(dashboard.links, dashboard.uid).toContainEqual(
        expect.objectContaining({ type: 'dashboards', tags: ['flussonic'], includeVars: true, keepTime: true }),
      );
    }
  });

  it('have data links only to dashboards that exist', () => {
    const uids = new Set(dashboards.map((d) => d.dashboard.uid));
    const links = each((d) => allPanels(d).flatMap((p) => (p.fieldConfig?.defaults?.links ?? []).map((l) => ({ d: d.uid, p: p.title, url: l.url }))));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      const target = /^\/d\/([^/?]+)/.exec(link.url)?.[1];
      expect(target && uids.has(target), `${link.d} ${link.p}: ${link.url}`).toBe(true);
    }
  });
});

describe('Dashboard variables', () => {
  it('select the datasource through a datasource variable of type prometheus', () => {
    for (const { dashboard } of dashboards) {
      const ds = dashboard.templating.list.find((v) => v.name === 'datasource');
      expect(ds, dashboard.uid).toMatchObject({ type: 'datasource', query: 'prometheus' });
    }
  });

  it('hard-code no datasource: every Prometheus datasource reference is ${datasource}', () => {
    const offenders: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${path}[${i}]`));
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'datasource' && typeof value === 'string') offenders.push(`${path}.datasource = ${value}`);
          if (key === 'datasource' && value && typeof value === 'object') {
            const ref = value as { type?: string; uid?: string };
            if (ref.type !== 'grafana' && ref.uid !== '${datasource}') offenders.push(`${path}.datasource = ${JSON.stringify(ref)}`);
          }
          walk(value, `${path}.${key}`);
        }
      }
    };
    for (const { dashboard } of dashboards) walk(dashboard, dashboard.uid);
    expect(offenders).toEqual([]);
  });

  it('offer job, server (catena for Catena) and, where it fits, stream: multi-select with All', () => {
    for (const { dashboard } of dashboards) {
      const names = dashboard.templating.list.map((v) => v.name);
      expect(names, dashboard.uid).toEqual(['datasource', ...EXPECTED[dashboard.uid]!.filters]);
      for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) {
        expect(v, `${dashboard.uid} $${v.name}`).toMatchObject({ multi: true, includeAll: true, allValue: '.*' });
      }
    }
  });

  it('read label values of catalogue metrics, filtered by the variables before them', () => {
    for (const { dashboard } of dashboards) {
      const before: string[] = [];
      for (const v of dashboard.templating.list) {
        if (v.type === 'query') {
          const { selector, label } = labelValuesQuery(variableQuery(v));
          expect(label, `${dashboard.uid} $${v.name}`).toBe(v.name);
          const [sel] = selectors(selector);
          const labels = labelsOfMetric(sel!.metric, recordNames);
          expect(labels, `${dashboard.uid} $${v.name}: ${sel!.metric}`).toContain(v.name);
          for (const prior of before.filter((p) => labels!.includes(p))) {
            expect(sel!.matchers, `${dashboard.uid} $${v.name} is not filtered by $${prior}`).toContainEqual({ label: prior, op: '=~', value: `$${prior}` });
          }
          before.push(v.name);
        }
      }
    }
  });
});

describe('Dashboard panels', () => {
  it('have unique ids within each dashboard and fit the 24-column grid without overlapping', () => {
    for (const { dashboard } of dashboards) {
      const panels = allPanels(dashboard);
      const ids = panels.map((p) => p.id);
      expect(new Set(ids).size, dashboard.uid).toBe(ids.length);
      for (const [i, a] of panels.entries()) {
        expect(a.gridPos.x + a.gridPos.w, `${dashboard.uid}#${a.id}`).toBeLessThanOrEqual(24);
        for (const b of panels.slice(i + 1)) {
          const overlap =
            a.gridPos.x < b.gridPos.x + b.gridPos.w && b.gridPos.x < a.gridPos.x + a.gridPos.w &&
            a.gridPos.y < b.gridPos.y + b.gridPos.h && b.gridPos.y < a.gridPos.y + a.gridPos.h;
          expect(overlap, `${dashboard.uid}: #${a.id} overlaps #${b.id}`).toBe(false);
        }
      }
    }
  });

  // Grafana's row schema has no description (the SDK builds rows without one): rows need a title.
  it('each have a title, a description and a Grafana unit (rows: a title)', () => {
    for (const { dashboard } of dashboards) {
      for (const p of allPanels(dashboard)) {
        const name = `${dashboard.uid}#${p.id} ${p.title}`;
        expect(p.title?.trim(), name).toBeTruthy();
        if (p.type === 'row') continue;
        expect(p.description?.trim(), name).toBeTruthy();
        expect(GRAFANA_UNITS.has(p.fieldConfig?.defaults?.unit ?? ''), `${name}: unit ${p.fieldConfig?.defaults?.unit}`).toBe(true);
      }
    }
  });

  it('each query at least once, with unique refIds (rows query nothing)', () => {
    for (const { dashboard } of dashboards) {
      for (const p of allPanels(dashboard)) {
        const refIds = (p.targets ?? []).map((t) => t.refId);
        if (p.type === 'row') expect(refIds, `${dashboard.uid}#${p.id}`).toEqual([]);
        else {
          expect(refIds.length, `${dashboard.uid}#${p.id}`).toBeGreaterThan(0);
          expect(new Set(refIds).size, `${dashboard.uid}#${p.id}`).toBe(refIds.length);
        }
      }
    }
  });
});

describe('Dashboard queries', () => {
  const queries = each(panelQueries);

  it('exist: seven dashboards with queries on every panel', () => {
    expect(queries.length).toBeGreaterThan(60);
  });

  it('use only metrics of the catalogue, its histogram series, recording rules of grafana/rules, or Prometheus built-ins', () => {
    const unknown = queries.flatMap((q) =>
      selectors(q.expr)
        .filter((s) => labelsOfMetric(s.metric, recordNames) === undefined)
        .map((s) => `${queryName(q)}: ${s.metric || '(no metric name)'}`),
    );
    expect(unknown).toEqual([]);
  });

  it('filter every selector by every dashboard variable whose label the metric has', () => {
    const unfiltered: string[] = [];
    for (const { dashboard } of dashboards) {
      const filters = EXPECTED[dashboard.uid]!.filters;
      for (const q of panelQueries(dashboard)) {
        for (const s of selectors(q.expr)) {
          const labels = labelsOfMetric(s.metric, recordNames) ?? [];
          for (const v of filters.filter((f) => labels.includes(f))) {
            const ok = s.matchers.some((m) => m.label === v && m.op === '=~' && m.value === `$${v}`);
            if (!ok) unfiltered.push(`${queryName(q)}: ${s.metric} lacks ${v}=~"$${v}"`);
          }
        }
      }
    }
    expect(unfiltered).toEqual([]);
  });

  it('use $__rate_interval (or $__range for totals over the time range) for every range window', () => {
    const fixed = queries.flatMap((q) =>
      rangeWindows(q.expr)
        .filter((w) => w !== '$__rate_interval' && w !== '$__range')
        .map((w) => `${queryName(q)}: [${w}]`),
    );
    expect(fixed).toEqual([]);
    expect(queries.some((q) => q.expr.includes('$__rate_interval'))).toBe(true);
  });

  it('use variables only inside regex matchers or as range windows', () => {
    for (const q of queries) {
      const stripped = q.expr
        .replace(/[a-z_]+=~"\$[a-z_]+"/g, '')
        .replace(/\[\$__(rate_interval|range)\]/g, '');
      expect(stripped, queryName(q)).not.toContain('$');
    }
  });

  it.skipIf(!promtoolPath)('parse (promtool check rules on every query, variables substituted)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flussonic-dashboards-'));
    try {
      const exprs = [
        ...queries.map((q) => ({ name: queryName(q), expr: substituteVariables(q.expr, PARSE_VALUES) })),
        ...dashboards.flatMap(({ dashboard }) =>
          dashboard.templating.list
            .filter((v: VariableJson) => v.type === 'query')
            .map((v) => ({ name: `${dashboard.uid} $${v.name}`, expr: substituteVariables(labelValuesQuery(variableQuery(v)).selector, PARSE_VALUES) })),
        ),
      ];
      const rules = exprs.map((e, i) => ({ record: `dashboard_query_${i}`, expr: e.expr }));
      const file = join(dir, 'dashboard-queries.yml');
      writeFileSync(file, stringifyYaml({ groups: [{ name: 'dashboard-queries', rules }] }));
      const r = promtool(promtoolPath!, ['check', 'rules', file]);
      // promtool names a failing rule by its index: map it back to the panel.
      const output = `${r.stdout}${r.stderr}`.replace(/dashboard_query_(\d+)|rule (\d+)/g, (m, a, b) => {
        const e = exprs[Number(a ?? Number(b) - 1)];
        return e ? `${m} [${e.name}: ${e.expr}]` : m;
      });
      expect(r.status, output).toBe(0);
      expect(output).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The switch of every optional family of the tier table (FAMILY_TIERS of src/serve/catalogue.ts). */
const SWITCH_OF = new Map(FAMILY_TIERS.flatMap((t) => (t.switch ? [[t.family, t.switch] as const] : [])));
const recordExprs = new Map(recordingRules().map((r) => [r.record, r.expr]));

/** The switch a metric name needs itself (histogram series: their family's), if any. */
function switchOf(name: string): string | undefined {
  return SWITCH_OF.get(name) ?? SWITCH_OF.get(name.replace(/_(bucket|sum|count)$/, ''));
}

/** Every switch a recording rule's expression reads, through the rules it reads. */
function ruleSwitches(record: string, seen = new Set<string>()): string[] {
  if (seen.has(record)) return [];
  seen.add(record);
  return selectors(recordExprs.get(record) ?? '').flatMap((s) =>
    s.metric.includes(':') ? ruleSwitches(s.metric, seen) : [switchOf(s.metric) ?? []].flat(),
  );
}

/** The switches a panel's description names: `families.X: true` or `collectors.X: true`. */
function mentionedSwitches(p: PanelJson): Set<string> {
  return new Set([...(p.description ?? '').matchAll(/`((?:families|collectors)\.[a-z_]+): true`/g)].map((m) => m[1]!));
}

describe('Dashboard notes on optional data', () => {
  const panels = each((d) => allPanels(d).filter((p) => p.type !== 'row').map((p) => ({ name: `${d.uid}#${p.id} ${p.title}`, p })));
  const namesOf = (p: PanelJson): string[][] => (p.targets ?? []).map((t) => selectors(t.expr).map((s) => s.metric));

  it('name the switch of every optional family a panel reads, and no other', () => {
    const missing: string[] = [];
    const extra: string[] = [];
    for (const { name, p } of panels) {
      const names = namesOf(p).flat();
      const direct = new Set(names.flatMap((n) => [switchOf(n) ?? []].flat()));
      const throughRules = new Set(names.filter((n) => n.includes(':')).flatMap((n) => ruleSwitches(n)));
      const mentioned = mentionedSwitches(p);
      for (const sw of direct) if (!mentioned.has(sw)) missing.push(`${name}: ${sw}`);
      for (const sw of mentioned) if (!direct.has(sw) && !throughRules.has(sw)) extra.push(`${name}: ${sw}`);
    }
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });

  it('say "Needs" when every metric of the panel needs the switch, "Some series need" when a query needs none', () => {
    const verbOf = (p: PanelJson, sw: string): string | undefined =>
      new RegExp(`(Needs|Some series need)(?: the \`[a-z]+\` collector:)? \`${sw.replace('.', '\\.')}: true\``).exec(p.description ?? '')?.[1];
    const wrong: string[] = [];
    let needs = 0;
    let some = 0;
    for (const { name, p } of panels) {
      const perQuery = namesOf(p);
      for (const sw of mentionedSwitches(p)) {
        const verb = verbOf(p, sw);
        if (perQuery.every((names) => names.every((n) => switchOf(n) === sw))) {
          if (verb !== 'Needs') wrong.push(`${name}: ${verb} ${sw}, expected Needs`);
          needs += 1;
        } else if (perQuery.some((names) => names.every((n) => !n.includes(':') && switchOf(n) === undefined))) {
          if (verb !== 'Some series need') wrong.push(`${name}: ${verb} ${sw}, expected Some series need`);
          some += 1;
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(needs).toBeGreaterThan(5);
    expect(some).toBeGreaterThan(0);
  });
});

describe('Grafana provisioning', () => {
  it('provisions a Prometheus datasource', () => {
    const doc = parseYaml(readFileSync(join(GRAFANA_DIR, 'provisioning/datasources/flussonic-prometheus.yml'), 'utf8')) as {
      apiVersion: number;
      datasources: { type: string; url: string; uid: string }[];
    };
    expect(doc.apiVersion).toBe(1);
    expect(doc.datasources).toHaveLength(1);
    expect(doc.datasources[0]).toMatchObject({ type: 'prometheus' });
    expect(doc.datasources[0]!.url).toMatch(/^https?:\/\//);
  });

  it('provisions the dashboards from the folder the README tells to mount them at', () => {
    const doc = parseYaml(readFileSync(join(GRAFANA_DIR, 'provisioning/dashboards/flussonic.yml'), 'utf8')) as {
      apiVersion: number;
      providers: { type: string; options: { path: string }; allowUiUpdates: boolean }[];
    };
    expect(doc.apiVersion).toBe(1);
    expect(doc.providers).toHaveLength(1);
    const provider = doc.providers[0]!;
    expect(provider).toMatchObject({ type: 'file', allowUiUpdates: false });
    const readme = readFileSync(join(GRAFANA_DIR, 'README.md'), 'utf8');
    expect(readme).toContain(`grafana/dashboards:${provider.options.path}`);
    expect(readme).toContain('grafana/provisioning:/etc/grafana/provisioning');
  });
});
