/**
 * Stream SLOs: availability of the streams against their objective, per stream group and per
 * server, from the recording rules of rules/flussonic-slo.rules.yml (see "Stream SLOs" in
 * grafana/README.md for the SLI, the objective and stream groups).
 */
import { dashboard, queryVariable, type Dashboard } from '../board.js';
import { barGauge, booleanMappings, q, row, sel, stat, STREAM_DETAIL_ROW_LINK, table, timeseries, type ThresholdStep } from '../panels.js';
import { datasource, job, server } from './variables.js';

const S = 'server';
const G = 'stream_group';

const OBJECTIVE = sel('job:flussonic_stream_availability_objective:ratio');
/** The error budget: the unavailable share the objective allows (0.001 for 99.9%). */
const BUDGET = `on (job) group_left () (1 - ${OBJECTIVE})`;
const PER_STREAM = sel('job_server_stream_group_stream:flussonic_stream_unavailable:bool', S, G);

/** Burn rate thresholds of the alerts: 1 (ticket, over 3 days), 6 and 14.4 (page). */
const BURN_LEVELS: ThresholdStep[] = [
  { color: 'green', value: null },
  { color: 'yellow', value: 1 },
  { color: 'orange', value: 6 },
  { color: 'red', value: 14.4 },
];

/** Remaining budget: red when little is left. */
const REMAINING_LEVELS: ThresholdStep[] = [
  { color: 'red', value: null },
  { color: 'orange', value: 0.25 },
  { color: 'green', value: 0.5 },
];

/** Unavailable share of stream-time over the dashboard's time range, by `by`, from the 5-minute sums. */
function ratioOverRange(level: 'job_server' | 'job_stream_group', label: string, by: string): string {
  const sum = sel(`${level}:flussonic_stream_unavailable:sum5m`, label);
  const count = sel(`${level}:flussonic_stream_observed:count5m`, label);
  return `sum by (${by}) (sum_over_time(${sum}[$__range])) / sum by (${by}) (sum_over_time(${count}[$__range]))`;
}

export function sloDashboard(): Dashboard {
  const group = (window: string) => sel(`job_stream_group:flussonic_stream_unavailable:${window}`, G);
  const byServer = (window: string) => sel(`job_server:flussonic_stream_unavailable:${window}`, S);
  return dashboard({
    uid: 'flussonic-slo',
    title: 'Flussonic / Stream SLOs',
    description:
      'Stream availability (alive and receiving) against its objective, per stream group and per server: burn rates ' +
      'and remaining error budget over the time range (30 days by default, the usual SLO period).',
    tags: ['slo', 'streams'],
    variables: [
      datasource(),
      job(),
      server(),
      queryVariable(
        'stream_group',
        'Stream group',
        'Stream groups: the stream_group label your relabelling sets; streams without it are in "default".',
        'job_server_stream_group_stream:flussonic_stream_unavailable:bool{job=~"$job",server=~"$server"}',
      ),
    ],
    time: 'now-30d',
    panels: [
      // The objective, and what is left of its error budget over the time range.
      row('Objective and error budget'),
      stat({
        title: 'Objective',
        description:
          'Share of stream-time the streams should be available (job:flussonic_stream_availability_objective:ratio; ' +
          'change it in rules/flussonic-slo.rules.yml).',
        unit: 'percentunit',
        decimals: 2,
        graph: false,
        queries: [q(`max(${OBJECTIVE})`, 'objective')],
      }),
      stat({
        title: 'Availability',
        description:
          'Share of stream-time the selected groups were available over the time range: streams that should be up, ' +
          'alive and with an input pause under 5 s. Idle on-demand streams are not counted.',
        unit: 'percentunit',
        decimals: 3,
        queries: [q(`1 - (${ratioOverRange('job_stream_group', G, 'job')})`, 'availability')],
      }),
      stat({
        title: 'Streams unavailable now',
        description: 'Streams that should be up and are down or stalled now, of those counted.',
        unit: 'none',
        thresholds: [
          { color: 'green', value: null },
          { color: 'red', value: 1 },
        ],
        queries: [q(`sum(${PER_STREAM}) or vector(0)`, 'unavailable')],
      }),
      stat({
        title: 'Streams counted',
        description: 'Streams the SLO counts now: every stream except idle on-demand ones nobody asked for.',
        unit: 'none',
        queries: [q(`count(${PER_STREAM})`, 'counted')],
      }),
      barGauge({
        title: 'Error budget remaining',
        description:
          'Share of the error budget (the unavailability the objective allows) left over the time range, per stream ' +
          'group: 100% is untouched, 0% is spent, below 0 the objective is missed.',
        unit: 'percentunit',
        w: 8,
        h: 4,
        max: 1,
        thresholds: REMAINING_LEVELS,
        queries: [q(`1 - (${ratioOverRange('job_stream_group', G, 'job, stream_group')}) / ${BUDGET}`, '{{stream_group}}')],
      }),

      // Per stream group, the level the alerts work at.
      row('Stream groups'),
      timeseries({
        title: 'Availability by stream group',
        description: 'Share of stream-time available over the last hour, per stream group.',
        unit: 'percentunit',
        max: 1,
        queries: [q(`1 - ${group('ratio1h')}`, '{{stream_group}}')],
      }),
      timeseries({
        title: 'Burn rate by stream group',
        description:
          'How fast each group spends its error budget (1 = exactly within the SLO period), over 1 hour, 6 hours and ' +
          '3 days. FlussonicStreamAvailabilityBudgetBurnFast pages above 14.4 (1h) or 6 (6h); ...BurnSlow files a ticket above 1 (3d).',
        unit: 'none',
        thresholds: BURN_LEVELS,
        queries: [
          q(`${group('ratio1h')} / ${BUDGET}`, '{{stream_group}} 1h'),
          q(`${group('ratio6h')} / ${BUDGET}`, '{{stream_group}} 6h'),
          q(`${group('ratio3d')} / ${BUDGET}`, '{{stream_group}} 3d'),
        ],
      }),

      // Per server: where a group's unavailability comes from.
      row('Servers'),
      timeseries({
        title: 'Availability by server',
        description: 'Share of stream-time available over the last hour, per server (all groups).',
        unit: 'percentunit',
        max: 1,
        queries: [q(`1 - ${byServer('ratio1h')}`, '{{server}}')],
      }),
      timeseries({
        title: 'Burn rate by server',
        description: 'How fast each server spends the error budget, over 1 hour and 6 hours: where a group\'s burn comes from.',
        unit: 'none',
        thresholds: BURN_LEVELS,
        queries: [
          q(`${byServer('ratio1h')} / ${BUDGET}`, '{{server}} 1h'),
          q(`${byServer('ratio6h')} / ${BUDGET}`, '{{server}} 6h'),
        ],
      }),
      table({
        title: 'Streams now, unavailable first',
        description:
          'Every stream the SLO counts, with its group and whether it is available now (down or stalled: unavailable); ' +
          'click one for its detail.',
        unit: 'none',
        hide: ['job'],
        sortBy: 'State',
        mappings: booleanMappings('available', 'unavailable', 'green', 'red'),
        columns: [{ field: 'Value', name: 'State' }],
        links: [STREAM_DETAIL_ROW_LINK],
        queries: [q(PER_STREAM)],
      }),
    ],
  });
}
