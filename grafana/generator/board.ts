/**
 * Dashboards and their variables, built with Grafana's Foundation SDK. What every Flussonic
 * dashboard shares is written here once: the datasource variable, multi-select variables with All,
 * `editable: false`, the link menu to the other dashboards, and a grid layout computed from panel
 * widths (so a dashboard lists panels in reading order and never places one by hand).
 */
import * as dash from '@grafana/grafana-foundation-sdk/dashboard';
import { DATASOURCE, type PanelSpec } from './panels.js';

/** Tag shared by every dashboard: the dashboard links find each other through it. */
export const COMMON_TAG = 'flussonic';

export type Dashboard = dash.Dashboard;
export type Variable = dash.DatasourceVariableBuilder | dash.QueryVariableBuilder;

export function datasourceVariable(): dash.DatasourceVariableBuilder {
  return new dash.DatasourceVariableBuilder('datasource')
    .label('Data source')
    .description('The Prometheus that scrapes flussonic-exporter.')
    .type('prometheus')
    .regex('')
    .hide(dash.VariableHide.DontHide);
}

/**
 * A multi-select query variable with All (`.*`, so that All also matches series without the
 * label, e.g. sessions when `stream` is not in the exporter's group_by).
 */
export function queryVariable(name: string, label: string, description: string, metricSelector: string): dash.QueryVariableBuilder {
  const query = `label_values(${metricSelector}, ${name})`;
  return new dash.QueryVariableBuilder(name)
    .label(label)
    .description(description)
    .datasource({ ...DATASOURCE })
    .definition(query)
    .query({ qryType: 1, query, refId: 'PrometheusVariableQueryEditor-VariableQuery' })
    .refresh(dash.VariableRefresh.OnTimeRangeChanged)
    .regex('')
    .sort(dash.VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .allValue('.*')
    .current({ selected: true, text: ['All'], value: ['$__all'] })
    .options([])
    .hide(dash.VariableHide.DontHide);
}

export interface DashboardSpec {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  variables: Variable[];
  panels: PanelSpec[];
  time?: string;
}

export interface Placed {
  readonly spec: PanelSpec;
  readonly id: number;
  readonly gridPos: dash.GridPos;
}

/**
 * Places panels left to right in the 24-column grid, wrapping when a panel does not fit; a row
 * always starts a new line. Ids follow the order of the spec, so they are stable as long as the
 * order is. (The SDK's own placement does not wrap a panel that does not fit, and sets no ids.)
 */
export function layout(specs: readonly PanelSpec[]): Placed[] {
  const placed: Placed[] = [];
  let x = 0;
  let y = 0;
  let lineHeight = 0;
  specs.forEach((spec, index) => {
    if (spec.kind === 'row' || x + spec.w > 24) {
      y += lineHeight;
      x = 0;
      lineHeight = 0;
    }
    placed.push({ spec, id: index + 1, gridPos: { x, y, w: spec.w, h: spec.h } });
    x += spec.w;
    lineHeight = Math.max(lineHeight, spec.h);
    if (spec.kind === 'row') {
      y += spec.h;
      x = 0;
      lineHeight = 0;
    }
  });
  return placed;
}

export function dashboard(spec: DashboardSpec): Dashboard {
  const builder = new dash.DashboardBuilder(spec.title)
    .uid(spec.uid)
    .description(spec.description)
    .tags([COMMON_TAG, ...spec.tags])
    .readonly()
    .tooltip(dash.DashboardCursorSync.Crosshair)
    .version(1)
    .time({ from: spec.time ?? 'now-6h', to: 'now' })
    .refresh('1m')
    .timezone('')
    .fiscalYearStartMonth(0)
    .liveNow(false)
    .weekStart('')
    .link(
      new dash.DashboardLinkBuilder('Flussonic dashboards')
        .type(dash.DashboardLinkType.Dashboards)
        .tags([COMMON_TAG])
        .asDropdown(true)
        .includeVars(true)
        .keepTime(true)
        .targetBlank(false)
        .icon('external link')
        .tooltip('The other Flussonic dashboards, with the same variables and time range')
        .url(''),
    )
    .annotation(
      new dash.AnnotationQueryBuilder()
        .builtIn(1)
        .datasource({ type: 'grafana', uid: '-- Grafana --' })
        .enable(true)
        .hide(true)
        .iconColor('rgba(0, 211, 255, 1)')
        .name('Annotations & Alerts')
        .type('dashboard'),
    )
    .variables(spec.variables);
  // Every panel comes placed (layout above), so the SDK keeps each position as given.
  for (const { spec: panel, id, gridPos } of layout(spec.panels)) {
    const built = panel.build(id, gridPos);
    if (built instanceof dash.RowBuilder) builder.withRow(built);
    else builder.withPanel(built);
  }
  return builder.build();
}
