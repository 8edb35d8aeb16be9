/**
 * Values for the variables of a dashboard, found as Grafana finds them, for the end-to-end tests
 * that evaluate every panel query through a real Prometheus.
 */
import { labelsOfMetric, panelQueries, recordingRules, variableQuery, type DashboardJson } from './artifacts.js';
import type { PrometheusApi } from './harness.js';
import { labelValuesQuery, promqlRegexOf, selectors, substituteVariables } from './promql.js';

const records = new Set(recordingRules().map((r) => r.record));

/**
 * Real values for the variables of a dashboard, found as Grafana finds them: each variable's
 * label_values() query with the variables before it filled in. Every value is selected (like
 * All, but spelled out), except stream: a few real streams, one for each stream-level family the
 * dashboard shows (so that the transcoder, DVR and track panels each have a stream with data).
 */
export async function variableValues(api: PrometheusApi, dashboard: DashboardJson, intervals: Readonly<Record<string, string>>): Promise<Record<string, string>> {
  const values: Record<string, string> = { ...intervals };
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
