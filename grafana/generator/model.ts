/**
 * A small builder for Grafana dashboard JSON models (schemaVersion 39, Grafana 10/11).
 *
 * It exists so that the conventions every Flussonic dashboard follows are written once: the
 * datasource variable, multi-select variables with All, a unit and a description on every panel,
 * `editable: false`, links between the dashboards, and a grid layout computed from panel widths.
 * The dashboards themselves (grafana/generator/dashboards/*.ts) only say what to show.
 */

/** Every query and variable reads from the dashboard's `datasource` variable, never a fixed uid. */
export const DATASOURCE = Object.freeze({ type: 'prometheus', uid: '${datasource}' });
export type DatasourceRef = typeof DATASOURCE;

/** Tag shared by every dashboard: the dashboard links find each other through it. */
export const COMMON_TAG = 'flussonic';

export interface GridPos {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Target {
  refId: string;
  datasource: DatasourceRef;
  expr: string;
  legendFormat: string;
  range: boolean;
  instant: boolean;
  format: 'time_series' | 'table';
  editorMode: 'code';
}

export interface ValueMapping {
  type: 'value';
  options: Record<string, { text: string; color: string; index: number }>;
}

export interface DataLink {
  title: string;
  url: string;
}

export interface FieldConfig {
  defaults: {
    unit: string;
    min?: number;
    max?: number;
    decimals?: number;
    mappings: ValueMapping[];
    thresholds: { mode: 'absolute'; steps: { color: string; value: number | null }[] };
    links?: DataLink[];
    color?: { mode: string };
    custom?: Record<string, unknown>;
  };
  overrides: unknown[];
}

export interface Panel {
  id: number;
  type: string;
  title: string;
  description: string;
  gridPos: GridPos;
  datasource?: DatasourceRef;
  targets?: Target[];
  fieldConfig?: FieldConfig;
  options?: Record<string, unknown>;
  transformations?: unknown[];
  collapsed?: boolean;
  panels?: Panel[];
}

export interface Variable {
  name: string;
  label: string;
  type: 'datasource' | 'query';
  description: string;
  hide: 0;
  [key: string]: unknown;
}

export interface DashboardLink {
  title: string;
  type: 'dashboards';
  tags: string[];
  asDropdown: boolean;
  includeVars: boolean;
  keepTime: boolean;
  targetBlank: boolean;
  icon: string;
  tooltip: string;
  url: string;
}

export interface Dashboard {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  editable: false;
  graphTooltip: 1;
  schemaVersion: number;
  version: number;
  time: { from: string; to: string };
  refresh: string;
  timezone: string;
  fiscalYearStartMonth: number;
  liveNow: boolean;
  weekStart: string;
  links: DashboardLink[];
  annotations: { list: unknown[] };
  templating: { list: Variable[] };
  panels: Panel[];
}

// ---------------------------------------------------------------------------------------------
// Queries

export interface QuerySpec {
  expr: string;
  legend?: string;
}

/** A query of a panel: a PromQL expression and its legend. */
export function q(expr: string, legend = ''): QuerySpec {
  return { expr: expr.trim(), legend };
}

/**
 * A selector filtered by the dashboard variables: `sel('flussonic_stream_alive', 'server', 'stream')`
 * is `flussonic_stream_alive{job=~"$job",server=~"$server",stream=~"$stream"}`. `job` is always
 * there; extra fixed matchers (`status="running"`) come last.
 */
export function sel(metric: string, ...labels: string[]): string {
  const variables = ['job', ...labels.filter((l) => !l.includes('='))];
  const fixed = labels.filter((l) => l.includes('='));
  const matchers = [...variables.map((v) => `${v}=~"$${v}"`), ...fixed];
  return `${metric}{${matchers.join(',')}}`;
}

// ---------------------------------------------------------------------------------------------
// Panels (before layout: no id and no position yet)

export interface PanelSpec {
  kind: 'panel' | 'row';
  w: number;
  h: number;
  build(id: number, gridPos: GridPos): Panel;
}

interface CommonOptions {
  title: string;
  description: string;
  unit: string;
  queries: QuerySpec[];
  w?: number;
  h?: number;
  min?: number;
  max?: number;
  decimals?: number;
  mappings?: ValueMapping[];
  thresholds?: { color: string; value: number | null }[];
  links?: DataLink[];
}

function targets(queries: QuerySpec[], instant: boolean): Target[] {
  return queries.map((query, i) => ({
    refId: String.fromCharCode(65 + i),
    datasource: DATASOURCE,
    expr: query.expr,
    legendFormat: query.legend ?? '',
    range: !instant,
    instant,
    format: instant ? 'table' : 'time_series',
    editorMode: 'code',
  }));
}

function fieldConfig(o: CommonOptions, custom?: Record<string, unknown>): FieldConfig {
  const defaults: FieldConfig['defaults'] = {
    unit: o.unit,
    mappings: o.mappings ?? [],
    thresholds: { mode: 'absolute', steps: o.thresholds ?? [{ color: 'green', value: null }] },
  };
  if (o.min !== undefined) defaults.min = o.min;
  if (o.max !== undefined) defaults.max = o.max;
  if (o.decimals !== undefined) defaults.decimals = o.decimals;
  if (o.links) defaults.links = o.links;
  if (custom) defaults.custom = custom;
  return { defaults, overrides: [] };
}

function panel(
  type: string,
  o: CommonOptions,
  defaults: { w: number; h: number; instant: boolean },
  options: Record<string, unknown>,
  extra: { custom?: Record<string, unknown>; transformations?: unknown[]; colorMode?: string; overrides?: unknown[] } = {},
): PanelSpec {
  return {
    kind: 'panel',
    w: o.w ?? defaults.w,
    h: o.h ?? defaults.h,
    build(id, gridPos) {
      const fc = fieldConfig(o, extra.custom);
      if (extra.colorMode) fc.defaults.color = { mode: extra.colorMode };
      if (extra.overrides) fc.overrides = extra.overrides;
      const p: Panel = {
        id,
        type,
        title: o.title,
        description: o.description,
        gridPos,
        datasource: DATASOURCE,
        targets: targets(o.queries, defaults.instant),
        fieldConfig: fc,
        options,
      };
      if (extra.transformations) p.transformations = extra.transformations;
      return p;
    },
  };
}

const LEGEND = { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] };
const TOOLTIP = { mode: 'multi', sort: 'desc' };

export function timeseries(o: CommonOptions & { stack?: boolean; bars?: boolean }): PanelSpec {
  const custom: Record<string, unknown> = {
    drawStyle: o.bars ? 'bars' : 'line',
    lineWidth: 1,
    fillOpacity: o.stack || o.bars ? 60 : 10,
    showPoints: 'never',
    spanNulls: false,
    stacking: { mode: o.stack ? 'normal' : 'none', group: 'A' },
  };
  return panel('timeseries', o, { w: 12, h: 8, instant: false }, { legend: LEGEND, tooltip: TOOLTIP }, {
    custom,
    colorMode: 'palette-classic',
  });
}

export function stat(o: CommonOptions & { graph?: boolean }): PanelSpec {
  return panel('stat', o, { w: 4, h: 4, instant: false }, {
    reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
    colorMode: 'value',
    graphMode: o.graph === false ? 'none' : 'area',
    justifyMode: 'auto',
    orientation: 'auto',
    textMode: 'auto',
  });
}

/** A column of a table: a field shown under another name and, if given, another unit. */
export interface Column {
  field: string;
  name: string;
  unit?: string;
}

/**
 * A table of the current values (instant queries), one row per series. With `merge`, the rows of
 * all queries that share label values are joined (Grafana's merge transformation).
 */
export function table(
  o: CommonOptions & { merge?: boolean; hide?: string[]; sortBy?: string; columns?: Column[] },
): PanelSpec {
  const excludeByName: Record<string, boolean> = { Time: true, __name__: true, instance: true };
  for (const name of o.hide ?? []) excludeByName[name] = true;
  const transformations: unknown[] = [];
  if (o.merge) transformations.push({ id: 'merge', options: {} });
  transformations.push({ id: 'organize', options: { excludeByName, indexByName: {}, renameByName: {} } });
  const options: Record<string, unknown> = { showHeader: true, cellHeight: 'sm', footer: { show: false } };
  if (o.sortBy) options.sortBy = [{ displayName: o.sortBy, desc: true }];
  const overrides = (o.columns ?? []).map((c) => ({
    matcher: { id: 'byName', options: c.field },
    properties: [{ id: 'displayName', value: c.name }, ...(c.unit ? [{ id: 'unit', value: c.unit }] : [])],
  }));
  return panel('table', o, { w: 24, h: 8, instant: true }, options, { transformations, overrides });
}

export function stateTimeline(o: CommonOptions): PanelSpec {
  return panel('state-timeline', o, { w: 12, h: 8, instant: false }, {
    showValue: 'auto',
    mergeValues: true,
    alignValue: 'left',
    rowHeight: 0.9,
    legend: { showLegend: true, displayMode: 'list', placement: 'bottom' },
    tooltip: { mode: 'single', sort: 'none' },
  }, { custom: { fillOpacity: 70, lineWidth: 0 }, colorMode: 'thresholds' });
}

export function barGauge(o: CommonOptions): PanelSpec {
  return panel('bargauge', o, { w: 12, h: 8, instant: true }, {
    reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
    orientation: 'horizontal',
    displayMode: 'gradient',
    showUnfilled: true,
    minVizWidth: 0,
    minVizHeight: 10,
  });
}

/** A row header: groups the panels below it; it has no query, so no unit. */
export function row(title: string, description: string): PanelSpec {
  return {
    kind: 'row',
    w: 24,
    h: 1,
    build: (id, gridPos) => ({ id, type: 'row', title, description, gridPos, collapsed: false, panels: [] }),
  };
}

// ---------------------------------------------------------------------------------------------
// Common field settings

/** Value mappings of a 0/1 gauge. */
export function booleanMappings(zero: string, one: string, zeroColor = 'red', oneColor = 'green'): ValueMapping[] {
  return [
    {
      type: 'value',
      options: {
        '0': { text: zero, color: zeroColor, index: 0 },
        '1': { text: one, color: oneColor, index: 1 },
      },
    },
  ];
}

/** Thresholds: green, then warning and critical levels. */
export function levels(warning: number, critical: number): { color: string; value: number | null }[] {
  return [
    { color: 'green', value: null },
    { color: 'orange', value: warning },
    { color: 'red', value: critical },
  ];
}

/**
 * A link to the stream detail dashboard for the row/series under the cursor, keeping the
 * datasource, job and time range.
 */
export const STREAM_DETAIL_LINK: DataLink = {
  title: 'Stream detail',
  url:
    '/d/flussonic-stream?${datasource:queryparam}&${job:queryparam}' +
    '&var-server=${__field.labels.server}&var-stream=${__field.labels.stream}&${__url_time_range}',
};

/** The same link from a table row (tables expose fields, not series labels). */
export const STREAM_DETAIL_ROW_LINK: DataLink = {
  title: 'Stream detail',
  url:
    '/d/flussonic-stream?${datasource:queryparam}&${job:queryparam}' +
    '&var-server=${__data.fields.server}&var-stream=${__data.fields.stream}&${__url_time_range}',
};

// ---------------------------------------------------------------------------------------------
// Variables

export function datasourceVariable(): Variable {
  return {
    name: 'datasource',
    label: 'Data source',
    type: 'datasource',
    description: 'The Prometheus that scrapes flussonic-exporter.',
    query: 'prometheus',
    regex: '',
    current: {},
    options: [],
    refresh: 1,
    hide: 0,
    skipUrlSync: false,
  };
}

/**
 * A multi-select query variable with All (`.*`, so that All also matches series without the
 * label, e.g. sessions when `stream` is not in the exporter's group_by).
 */
export function queryVariable(name: string, label: string, description: string, metricSelector: string): Variable {
  const query = `label_values(${metricSelector}, ${name})`;
  return {
    name,
    label,
    type: 'query',
    description,
    datasource: DATASOURCE,
    definition: query,
    query: { qryType: 1, query, refId: 'PrometheusVariableQueryEditor-VariableQuery' },
    refresh: 2,
    regex: '',
    sort: 1,
    multi: true,
    includeAll: true,
    allValue: '.*',
    current: { selected: true, text: ['All'], value: ['$__all'] },
    options: [],
    hide: 0,
    skipUrlSync: false,
  };
}

// ---------------------------------------------------------------------------------------------
// Dashboard and layout

export interface DashboardSpec {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  variables: Variable[];
  panels: PanelSpec[];
  time?: string;
}

/**
 * Places panels left to right in the 24-column grid, wrapping when a panel does not fit; a row
 * always starts a new line. Ids follow the order of the spec, so they are stable as long as the
 * order is.
 */
export function layout(specs: PanelSpec[]): Panel[] {
  const panels: Panel[] = [];
  let x = 0;
  let y = 0;
  let lineHeight = 0;
  specs.forEach((spec, index) => {
    if (spec.kind === 'row' || x + spec.w > 24) {
      y += lineHeight;
      x = 0;
      lineHeight = 0;
    }
    panels.push(spec.build(index + 1, { x, y, w: spec.w, h: spec.h }));
    x += spec.w;
    lineHeight = Math.max(lineHeight, spec.h);
    if (spec.kind === 'row') {
      y += spec.h;
      x = 0;
      lineHeight = 0;
    }
  });
  return panels;
}

export function dashboard(spec: DashboardSpec): Dashboard {
  return {
    uid: spec.uid,
    title: spec.title,
    description: spec.description,
    tags: [COMMON_TAG, ...spec.tags],
    editable: false,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    time: { from: spec.time ?? 'now-6h', to: 'now' },
    refresh: '1m',
    timezone: '',
    fiscalYearStartMonth: 0,
    liveNow: false,
    weekStart: '',
    links: [
      {
        title: 'Flussonic dashboards',
        type: 'dashboards',
        tags: [COMMON_TAG],
        asDropdown: true,
        includeVars: true,
        keepTime: true,
        targetBlank: false,
        icon: 'external link',
        tooltip: 'The other Flussonic dashboards, with the same variables and time range',
        url: '',
      },
    ],
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    templating: { list: spec.variables },
    panels: layout(spec.panels),
  };
}
