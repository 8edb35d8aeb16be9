/**
 * Audience: who watches, how, and for how long (the sessions collector).
 *
 * The sessions families carry the labels of the exporter's `group_by` setting (default: stream,
 * proto). A panel grouping by a label that is not in group_by shows one series with the label
 * empty; the panel descriptions say which label they need.
 */
import { dashboard, type Dashboard } from '../board.js';
import { q, row, sel, stat, timeseries } from '../panels.js';
import { datasource, job, server, stream } from './variables.js';

const S = 'server';
const ST = 'stream';

export function audienceDashboard(): Dashboard {
  const sessions = (metric: string) => sel(metric, S, ST);
  // The duration histogram has only server and proto labels.
  const duration = sel('flussonic_session_duration_seconds_bucket', S);
  const quantile = (phi: number, window: string) =>
    `histogram_quantile(${phi}, sum by (le) (rate(${duration}[${window}])))`;
  return dashboard({
    uid: 'flussonic-audience',
    title: 'Flussonic / Audience',
    description: 'Open sessions by protocol, stream and country; traffic; session opens, closes and durations.',
    tags: ['sessions'],
    variables: [datasource(), job(), server(), stream()],
    panels: [
      // Across the selected servers and streams.
      row('Now'),
      stat({
        title: 'Open sessions',
        description: 'Sessions open now (GET /sessions).',
        unit: 'short',
        w: 6,
        queries: [q(`sum(${sessions('flussonic_sessions')})`, 'sessions')],
      }),
      stat({
        title: 'Session opens',
        description: 'Sessions opened per minute. A session that opened and closed between two polls is not seen.',
        unit: 'cpm',
        w: 6,
        queries: [q(`60 * sum(rate(${sessions('flussonic_sessions_opened_total')}[$__rate_interval]))`, 'opens')],
      }),
      stat({
        title: 'Bytes sent',
        description: 'Bytes per second sent in sessions.',
        unit: 'Bps',
        w: 6,
        queries: [q(`sum(rate(${sessions('flussonic_sessions_sent_bytes_total')}[$__rate_interval]))`, 'sent')],
      }),
      stat({
        title: 'Median session duration',
        description: 'Median lifetime of the sessions that closed in the selected time range (all streams of the selected servers).',
        unit: 's',
        w: 6,
        graph: false,
        queries: [q(`histogram_quantile(0.5, sum by (le) (increase(${duration}[$__range])))`, 'median')],
      }),

      // Open sessions over time.

      row('Sessions'),
      timeseries({
        title: 'Sessions by protocol',
        description: 'Open sessions by protocol (needs proto in the exporter sessions group_by; it is there by default).',
        unit: 'short',
        stack: true,
        queries: [q(`sum by (proto) (${sessions('flussonic_sessions')})`, '{{proto}}')],
      }),
      timeseries({
        title: 'Sessions by server, now and a week ago',
        description:
          'Open sessions per server, and the same time last week: the baseline of the FlussonicAudienceDrop alert ' +
          '(it fires below half of it). Empty a week ago until Prometheus holds a week of data.',
        unit: 'short',
        queries: [
          q(`sum by (server) (${sel('job_server:flussonic_sessions:sum', S)})`, '{{server}}'),
          q(`sum by (server) (${sel('job_server:flussonic_sessions:sum', S)} offset 1w)`, '{{server}} a week ago'),
        ],
      }),
      timeseries({
        title: 'Top streams by sessions',
        description: 'The ten streams with the most open sessions (needs stream in the exporter sessions group_by; it is there by default).',
        unit: 'short',
        queries: [q(`topk(10, sum by (server, stream) (${sessions('flussonic_sessions')}))`, '{{server}} {{stream}}')],
      }),
      timeseries({
        title: 'Sessions by country',
        description: 'Open sessions by country of the viewer (needs country in the exporter sessions group_by, which is not the default).',
        unit: 'short',
        stack: true,
        queries: [q(`sum by (country) (${sessions('flussonic_sessions')})`, '{{country}}')],
      }),

      // What sessions transfer, and how often they open and close.

      row('Traffic and churn'),
      timeseries({
        title: 'Bytes sent by protocol',
        description: 'Bytes per second sent in sessions, by protocol.',
        unit: 'Bps',
        stack: true,
        queries: [q(`sum by (proto) (rate(${sessions('flussonic_sessions_sent_bytes_total')}[$__rate_interval]))`, '{{proto}}')],
      }),
      timeseries({
        title: 'Session opens and closes',
        description: 'Sessions opened and closed per minute, per server.',
        unit: 'cpm',
        queries: [
          q(`60 * sum by (server) (rate(${sessions('flussonic_sessions_opened_total')}[$__rate_interval]))`, '{{server}} opened'),
          q(`60 * sum by (server) (rate(${sessions('flussonic_sessions_closed_total')}[$__rate_interval]))`, '{{server}} closed'),
        ],
      }),
      timeseries({
        title: 'Session duration percentiles',
        description: 'Median, 90th and 99th percentile lifetime of closing sessions (buckets from 10 s to 24 h).',
        unit: 's',
        queries: [
          q(quantile(0.5, '$__rate_interval'), 'p50'),
          q(quantile(0.9, '$__rate_interval'), 'p90'),
          q(quantile(0.99, '$__rate_interval'), 'p99'),
        ],
      }),
      timeseries({
        title: 'Average session duration by protocol',
        description: 'Mean lifetime of closing sessions, by protocol.',
        unit: 's',
        queries: [
          q(
            `sum by (proto) (rate(${sel('flussonic_session_duration_seconds_sum', S)}[$__rate_interval])) / sum by (proto) (rate(${sel('flussonic_session_duration_seconds_count', S)}[$__rate_interval]))`,
            '{{proto}}',
          ),
        ],
      }),
    ],
  });
}
