/**
 * The panels of the Flussonic dashboards, built with Grafana's Foundation SDK
 * (@grafana/grafana-foundation-sdk): its builders are generated from Grafana's own schema, so a
 * field Grafana does not know, or a value of the wrong kind, does not typecheck.
 *
 * This module holds the conventions every panel follows, written once: every query and panel
 * reads from the `datasource` variable, every panel has a unit and a description, and optional
 * data is said in the description (derived from the families its queries read: families.ts). The dashboards (dashboards/*.ts) only say what to
 * show; board.ts places the panels and builds the dashboards.
 */
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as heatmap_ from '@grafana/grafana-foundation-sdk/heatmap';
import * as dash from '@grafana/grafana-foundation-sdk/dashboard';
import * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import * as stat_ from '@grafana/grafana-foundation-sdk/stat';
import * as statetimeline from '@grafana/grafana-foundation-sdk/statetimeline';
import * as table_ from '@grafana/grafana-foundation-sdk/table';
import * as ts from '@grafana/grafana-foundation-sdk/timeseries';
import { panelNeeds, panelShapes, readsEvents, type FamilySwitch, type PanelShapes, type StatsShape } from './families.js';

/** Every query and variable reads from the dashboard's `datasource` variable, never a fixed uid. */
export const DATASOURCE: Readonly<common.DataSourceRef> = Object.freeze({ type: 'prometheus', uid: '${datasource}' });

export type ValueMapping = dash.ValueMapping;
export type ThresholdStep = dash.Threshold;

/** A data link of a field: title and URL (Grafana's field links share the dashboard link type). */
export interface DataLink {
  readonly title: string;
  readonly url: string;
}

// ---------------------------------------------------------------------------------------------
// Queries

export interface QuerySpec {
  readonly expr: string;
  readonly legend: string;
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
// Optional data

/**
 * The note a panel carries when its data needs a switch the exporter has off by default. The
 * generator adds it from the tier table (families.ts): "Needs ..." when every metric the panel
 * reads needs the switch (`all`), "Some series need ..." when the panel also shows default data.
 */
export function needsNote(sw: FamilySwitch, all = true): string {
  const needs = all ? 'Needs' : 'Some series need';
  const [kind, key] = sw.split('.') as ['families' | 'collectors', string];
  return kind === 'families'
    ? `${needs} \`families.${key}: true\` in the server's config (servers[].families; off by default).`
    : `${needs} the \`${key}\` collector: \`collectors.${key}: true\` in the server's config (servers[].collectors; off by default).`;
}

const GENERATION: Readonly<Record<StatsShape, string>> = { flat: 'Flussonic 23.x/24.x', nested: 'Flussonic 2025 and later' };
const SERVERS: Readonly<Record<StatsShape, string>> = { flat: '23.x/24.x servers', nested: 'Flussonic 2025 and later servers' };

/**
 * The note a panel carries when only some stats generations report its data: derived from the
 * families' `shapes` declarations (families.ts), with the API fields they read. `all`: the whole
 * panel; else only some of its series.
 */
export function generationNote(p: PanelShapes): string {
  const by = p.shapes.map((s) => GENERATION[s]).join(' and ') || 'no Flussonic generation';
  const others = (['flat', 'nested'] as const).filter((s) => !p.shapes.includes(s)).map((s) => SERVERS[s]).join(' and ');
  const fields = p.fields.length > 0 ? ` (${p.fields.join(', ')})` : '';
  return p.all ? `Reported by ${by}${fields}: ${others} leave this empty.` : `Some series are reported only by ${by}${fields}: ${others} leave some series empty.`;
}

// ---------------------------------------------------------------------------------------------
// Panels (before layout: no id and no position yet)

export interface PanelSpec {
  readonly kind: 'panel' | 'row';
  readonly w: number;
  readonly h: number;
  /** The panel at its place; board.ts adds it to the dashboard. */
  build(id: number, gridPos: dash.GridPos): cog.Builder<dash.Panel> | dash.RowBuilder;
}

export interface CommonOptions {
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
  thresholds?: ThresholdStep[];
  links?: DataLink[];
}

/** The setters every panel builder of the SDK shares, as far as the conventions use them. */
interface PanelBuilderLike {
  id(id: number): this;
  gridPos(gridPos: dash.GridPos): this;
  title(title: string): this;
  description(description: string): this;
  datasource(datasource: common.DataSourceRef): this;
  targets(targets: cog.Builder<cog.Dataquery>[]): this;
  unit(unit: string): this;
  min(min: number): this;
  max(max: number): this;
  decimals(decimals: number): this;
  mappings(mappings: dash.ValueMapping[]): this;
  thresholds(thresholds: cog.Builder<dash.ThresholdsConfig>): this;
  dataLinks(links: cog.Builder<dash.DashboardLink>[]): this;
}

/** The description, the stats generations and every switch the queries' families need (families.ts). */
function description(o: CommonOptions): string {
  const exprs = o.queries.map((query) => query.expr);
  const needs = panelNeeds(exprs);
  const shapes = panelShapes(exprs);
  const events = readsEvents(exprs) ? [EVENTS_NOTE] : [];
  return [o.description, ...(shapes ? [generationNote(shapes)] : []), ...events, ...needs.map((n) => needsNote(n.switch, n.all))].join(' ');
}

/** The note of a panel that reads the event sink's families (src/events). */
const EVENTS_NOTE = 'Needs `events.enabled: true` in the exporter\'s config and the event sink set on each server (docs/events.md; off by default).';

function targets(queries: QuerySpec[], instant: boolean, format?: prometheus.PromQueryFormat): prometheus.DataqueryBuilder[] {
  return queries.map((query, i) => {
    const target = new prometheus.DataqueryBuilder()
      .refId(String.fromCharCode(65 + i))
      .datasource({ ...DATASOURCE })
      .expr(query.expr)
      .legendFormat(query.legend)
      .format(format ?? (instant ? prometheus.PromQueryFormat.Table : prometheus.PromQueryFormat.TimeSeries))
      .editorMode(prometheus.QueryEditorMode.Code);
    return instant ? target.instant() : target.range();
  });
}

export function thresholdsOf(steps: ThresholdStep[] | undefined): dash.ThresholdsConfigBuilder {
  return new dash.ThresholdsConfigBuilder()
    .mode(dash.ThresholdsMode.Absolute)
    .steps(steps ?? [{ color: 'green', value: null }]);
}

/** Applies what every panel has: id, place, title, description, datasource, queries, unit. */
function configure<B extends PanelBuilderLike>(b: B, o: CommonOptions, instant: boolean, id: number, gridPos: dash.GridPos): B {
  b.id(id)
    .gridPos(gridPos)
    .title(o.title)
    .description(description(o))
    .datasource({ ...DATASOURCE })
    .targets(targets(o.queries, instant))
    .unit(o.unit)
    .mappings(o.mappings ?? [])
    .thresholds(thresholdsOf(o.thresholds));
  if (o.min !== undefined) b.min(o.min);
  if (o.max !== undefined) b.max(o.max);
  if (o.decimals !== undefined) b.decimals(o.decimals);
  if (o.links) b.dataLinks(o.links.map((l) => new dash.DashboardLinkBuilder(l.title).url(l.url)));
  return b;
}

function spec(o: CommonOptions, w: number, h: number, build: (id: number, gridPos: dash.GridPos) => cog.Builder<dash.Panel>): PanelSpec {
  return { kind: 'panel', w: o.w ?? w, h: o.h ?? h, build };
}

const legend = (): common.VizLegendOptionsBuilder =>
  new common.VizLegendOptionsBuilder()
    .showLegend(true)
    .displayMode(common.LegendDisplayMode.List)
    .placement(common.LegendPlacement.Bottom)
    .calcs([]);

const lastNotNull = (): common.ReduceDataOptionsBuilder =>
  new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).fields('').values(false);

export function timeseries(o: CommonOptions & { stack?: boolean; bars?: boolean }): PanelSpec {
  return spec(o, 12, 8, (id, gridPos) =>
    configure(new ts.PanelBuilder(), o, false, id, gridPos)
      .legend(legend())
      .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending))
      .drawStyle(o.bars ? common.GraphDrawStyle.Bars : common.GraphDrawStyle.Line)
      .lineWidth(1)
      .fillOpacity(o.stack || o.bars ? 60 : 10)
      .showPoints(common.VisibilityMode.Never)
      .spanNulls(false)
      .stacking(new common.StackingConfigBuilder().mode(o.stack ? common.StackingMode.Normal : common.StackingMode.None).group('A'))
      .colorScheme(new dash.FieldColorBuilder().mode(dash.FieldColorModeId.PaletteClassic)),
  );
}

export function stat(o: CommonOptions & { graph?: boolean }): PanelSpec {
  return spec(o, 4, 4, (id, gridPos) =>
    configure(new stat_.PanelBuilder(), o, false, id, gridPos)
      .reduceOptions(lastNotNull())
      .colorMode(common.BigValueColorMode.Value)
      .graphMode(o.graph === false ? common.BigValueGraphMode.None : common.BigValueGraphMode.Area)
      .justifyMode(common.BigValueJustifyMode.Auto)
      .orientation(common.VizOrientation.Auto)
      .textMode(common.BigValueTextMode.Auto),
  );
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
export function table(o: CommonOptions & { merge?: boolean; hide?: string[]; sortBy?: string; columns?: Column[] }): PanelSpec {
  return spec(o, 24, 8, (id, gridPos) => {
    const excludeByName: Record<string, boolean> = { Time: true, __name__: true, instance: true };
    for (const name of o.hide ?? []) excludeByName[name] = true;
    const b = configure(new table_.PanelBuilder(), o, true, id, gridPos)
      .showHeader(true)
      .cellHeight(common.TableCellHeight.Sm)
      .footer(new common.TableFooterOptionsBuilder().show(false));
    if (o.merge) b.withTransformation({ id: 'merge', options: {} });
    b.withTransformation({ id: 'organize', options: { excludeByName, indexByName: {}, renameByName: {} } });
    if (o.sortBy) b.sortBy([new common.TableSortByFieldStateBuilder().displayName(o.sortBy).desc(true)]);
    for (const c of o.columns ?? []) {
      b.overrideByName(c.field, [{ id: 'displayName', value: c.name }, ...(c.unit ? [{ id: 'unit', value: c.unit }] : [])]);
    }
    return b;
  });
}

export function stateTimeline(o: CommonOptions): PanelSpec {
  return spec(o, 12, 8, (id, gridPos) =>
    configure(new statetimeline.PanelBuilder(), o, false, id, gridPos)
      .showValue(common.VisibilityMode.Auto)
      .mergeValues(true)
      .alignValue(common.TimelineValueAlignment.Left)
      .rowHeight(0.9)
      .legend(legend())
      .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Single).sort(common.SortOrder.None))
      .fillOpacity(70)
      .lineWidth(0)
      .colorScheme(new dash.FieldColorBuilder().mode(dash.FieldColorModeId.Thresholds)),
  );
}

export function barGauge(o: CommonOptions): PanelSpec {
  return spec(o, 12, 8, (id, gridPos) =>
    configure(new bargauge.PanelBuilder(), o, true, id, gridPos)
      .reduceOptions(lastNotNull())
      .orientation(common.VizOrientation.Horizontal)
      .displayMode(common.BarGaugeDisplayMode.Gradient)
      .showUnfilled(true)
      .minVizWidth(0)
      .minVizHeight(10),
  );
}

/**
 * A heatmap of a histogram's buckets over time: its query sums `_bucket` rates by `le`, read by
 * Grafana as buckets (the query format `heatmap`), not calculated again.
 */
export function heatmap(o: CommonOptions): PanelSpec {
  return spec(o, 12, 8, (id, gridPos) =>
    configure(new heatmap_.PanelBuilder(), o, false, id, gridPos)
      .targets(targets(o.queries, false, prometheus.PromQueryFormat.Heatmap))
      .calculate(false)
      .cellGap(1)
      .color(new heatmap_.HeatmapColorOptionsBuilder().mode(heatmap_.HeatmapColorMode.Scheme).scheme('Oranges').steps(64).fill('dark').exponent(0.5).scale(heatmap_.HeatmapColorScale.Exponential).reverse(false))
      .yAxis(new heatmap_.YAxisConfigBuilder().unit(o.unit))
      .rowsFrame(new heatmap_.RowsHeatmapOptionsBuilder().layout(common.HeatmapCellLayout.Auto))
      .showValue(common.VisibilityMode.Never)
      .tooltip(new heatmap_.HeatmapTooltipBuilder().mode(common.TooltipDisplayMode.Single).yHistogram(false))
      .showLegend(),
  );
}

/**
 * A row header: groups the panels below it; it has no query, so no unit. Grafana's row schema has
 * no description: what a row groups is said by its title (and a comment where it is built).
 */
export function row(title: string): PanelSpec {
  return {
    kind: 'row',
    w: 24,
    h: 1,
    build: (id, gridPos) => new dash.RowBuilder(title).id(id).gridPos(gridPos).collapsed(false),
  };
}

// ---------------------------------------------------------------------------------------------
// Common field settings

/** Value mappings of a 0/1 gauge. */
export function booleanMappings(zero: string, one: string, zeroColor = 'red', oneColor = 'green'): ValueMapping[] {
  return [valueMappings([[zero, zeroColor], [one, oneColor]])];
}

/** Value mappings of the numbers 0, 1, 2, ...: the i-th [text, color] names the number i. */
export function valueMappings(entries: readonly (readonly [string, string])[]): dash.ValueMap {
  const options: Record<string, dash.ValueMappingResult> = {};
  entries.forEach(([text, color], index) => {
    options[String(index)] = { text, color, index };
  });
  return { type: dash.MappingType.ValueToText, options };
}

/** Thresholds: green, then warning and critical levels. */
export function levels(warning: number, critical: number): ThresholdStep[] {
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
