/** Exporter health: whether flussonic-exporter itself polls, scrapes and reloads well. */
import { dashboard, queryVariable, type Dashboard } from '../board.js';
import { booleanMappings, q, row, sel, stat, stateTimeline, table, timeseries } from '../panels.js';
import { datasource, job } from './variables.js';

const S = 'server';

export function exporterDashboard(): Dashboard {
  return dashboard({
    uid: 'flussonic-exporter',
    title: 'Flussonic / Exporter health',
    description: 'Polls per collector, upstream API requests and errors, bytes read, dropped series, configuration reloads.',
    tags: ['exporter'],
    variables: [
      datasource(),
      job(),
      // Every target the exporter polls has collector self-metrics: Flussonic servers and Catena services.
      queryVariable(
        'server',
        'Target',
        'Poll target(s): Flussonic servers and Catena services, by their configured name.',
        'flussonic_exporter_collector_success{job=~"$job"}',
      ),
    ],
    panels: [
      // The exporter processes of the selected jobs.
      row('Exporter'),
      stat({
        title: 'Exporters up',
        description: 'Exporter processes Prometheus scraped successfully (up).',
        unit: 'none',
        w: 6,
        queries: [q(`sum(up{job=~"$job"})`, 'up')],
      }),
      stat({
        title: 'Failing collectors',
        description: 'Collectors whose last poll failed, over all selected targets.',
        unit: 'none',
        w: 6,
        thresholds: [
          { color: 'green', value: null },
          { color: 'red', value: 1 },
        ],
        queries: [q(`count(${sel('flussonic_exporter_collector_success', S)} == 0) or vector(0)`, 'failing')],
      }),
      stat({
        title: 'Last configuration load',
        description: 'Whether the last configuration (re)load succeeded. After a failed reload the exporter keeps the previous configuration.',
        unit: 'none',
        w: 6,
        mappings: booleanMappings('failed', 'ok'),
        thresholds: [
          { color: 'red', value: null },
          { color: 'green', value: 1 },
        ],
        queries: [q(`min(${sel('flussonic_exporter_config_last_reload_success')})`, 'reload')],
      }),
      stat({
        title: 'Configuration age',
        description: 'Time since the last successful configuration (re)load.',
        unit: 'dtdurations',
        w: 6,
        graph: false,
        queries: [q(`time() - max(${sel('flussonic_exporter_config_last_reload_success_timestamp_seconds')})`, 'age')],
      }),
      table({
        title: 'Exporter versions',
        description: 'Version and Node.js version of each exporter process.',
        unit: 'none',
        h: 5,
        hide: ['Value'],
        queries: [q(`max by (job, instance, version, nodejs_version) (${sel('flussonic_exporter_build_info')})`)],
      }),

      // Each collector of each target.

      row('Polls'),
      stateTimeline({
        title: 'Poll success',
        description: 'Whether the last poll of each collector succeeded.',
        unit: 'none',
        w: 24,
        mappings: booleanMappings('failed', 'ok'),
        queries: [q(`max by (server, collector) (${sel('flussonic_exporter_collector_success', S)})`, '{{server}} {{collector}}')],
      }),
      timeseries({
        title: 'Poll duration',
        description: 'Wall time of the last poll of each collector. It must stay below the poll interval.',
        unit: 's',
        queries: [q(`max by (server, collector) (${sel('flussonic_exporter_collector_duration_seconds', S)})`, '{{server}} {{collector}}')],
      }),
      timeseries({
        title: 'Time since last successful poll',
        description: 'Age of the data of each collector: time since its last successful poll.',
        unit: 's',
        queries: [
          q(`time() - max by (server, collector) (${sel('flussonic_exporter_last_success_timestamp_seconds', S)})`, '{{server}} {{collector}}'),
        ],
      }),

      // Requests to the Flussonic and Catena APIs.

      row('Upstream API'),
      timeseries({
        title: 'API requests by status code',
        description: 'Requests per second to each upstream endpoint, by HTTP status code (code="error" when no response arrived).',
        unit: 'reqps',
        queries: [
          q(`sum by (server, endpoint, code) (rate(${sel('flussonic_exporter_api_requests_total', S)}[$__rate_interval]))`, '{{server}} {{endpoint}} {{code}}'),
        ],
      }),
      timeseries({
        title: 'API errors by reason',
        description: 'Failed upstream requests per second by reason: timeout, connection, http, invalid_json, too_large, cursor_loop, auth, shape (a response of the wrong structure).',
        unit: 'reqps',
        queries: [
          q(`sum by (server, endpoint, reason) (rate(${sel('flussonic_exporter_api_errors_total', S)}[$__rate_interval]))`, '{{server}} {{endpoint}} {{reason}}'),
        ],
      }),
      timeseries({
        title: 'Bytes read from the API',
        description: 'Response body bytes per second read from each upstream endpoint.',
        unit: 'Bps',
        queries: [
          q(`sum by (server, endpoint) (rate(${sel('flussonic_exporter_api_response_bytes_total', S)}[$__rate_interval]))`, '{{server}} {{endpoint}}'),
        ],
      }),
      timeseries({
        title: 'Dropped series',
        description: 'Series per second not exported because a collector hit its cardinality limit (max_series).',
        unit: 'cps',
        queries: [
          q(`sum by (server, collector) (rate(${sel('flussonic_exporter_series_dropped_total', S)}[$__rate_interval]))`, '{{server}} {{collector}}'),
        ],
      }),

      // How Prometheus sees the exporter.

      row('Scrapes'),
      timeseries({
        title: 'Scrape duration',
        description: 'Time Prometheus needs to scrape each exporter process. /metrics is rendered once per poll, so it stays flat as series grow.',
        unit: 's',
        queries: [q(`max by (instance) (scrape_duration_seconds{job=~"$job"})`, '{{instance}}')],
      }),
      timeseries({
        title: 'Samples scraped',
        description: 'Samples in each scrape of each exporter process.',
        unit: 'short',
        queries: [q(`max by (instance) (scrape_samples_scraped{job=~"$job"})`, '{{instance}}')],
      }),
    ],
  });
}
