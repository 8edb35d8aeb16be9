/** Fleet overview: the state of every Flussonic server at a glance, and the worst streams. */
import { dashboard, type Dashboard } from '../board.js';
import { barGauge, heatmap, levels, q, row, sel, stat, STREAM_DETAIL_ROW_LINK, table, timeseries } from '../panels.js';
import { datasource, job, server } from './variables.js';

const S = 'server';

export function fleetDashboard(): Dashboard {
  return dashboard({
    uid: 'flussonic-fleet',
    title: 'Flussonic / Fleet overview',
    description: 'Servers, streams, clients, traffic and load of every Flussonic server; the worst streams.',
    tags: ['overview'],
    variables: [datasource(), job(), server()],
    panels: [
      // Counts across the selected servers, now.
      row('Fleet'),
      stat({
        title: 'Servers up',
        description: 'Servers whose last poll of every enabled collector succeeded (flussonic_up = 1).',
        unit: 'none',
        queries: [q(`sum(${sel('flussonic_up', S)})`, 'up')],
      }),
      stat({
        title: 'Servers down',
        description: 'Servers whose last poll failed in at least one collector (flussonic_up = 0).',
        unit: 'none',
        thresholds: levels(1, 1),
        queries: [q(`count(${sel('flussonic_up', S)} == 0) or vector(0)`, 'down')],
      }),
      stat({
        title: 'Streams',
        description: 'Streams the selected servers report in /streams.',
        unit: 'none',
        queries: [q(`sum(${sel('job_server:flussonic_streams:count', S)})`, 'streams')],
      }),
      stat({
        title: 'Streams alive',
        description: 'Streams receiving frames from their input (stats.alive).',
        unit: 'none',
        queries: [q(`sum(${sel('job_server:flussonic_streams_alive:sum', S)})`, 'alive')],
      }),
      stat({
        title: 'Streams down',
        description:
          'Streams that are not alive although they should be: on-demand streams that wait for a viewer ' +
          'and nobody watches are not counted (see FlussonicStreamDown in the runbook).',
        unit: 'none',
        thresholds: levels(1, 1),
        queries: [q(`sum(${sel('job_server:flussonic_streams_down:sum', S)}) or vector(0)`, 'down')],
      }),
      stat({
        title: 'Clients',
        description: 'Clients connected to the selected servers (total_clients).',
        unit: 'short',
        queries: [q(`sum(${sel('flussonic_server_clients', S)})`, 'clients')],
      }),
      table({
        title: 'Servers',
        description: 'Version, license type, streamer status and uptime of each server.',
        unit: 'dtdurations',
        h: 6,
        merge: true,
        hide: ['Value #A', 'Value #C'],
        columns: [{ field: 'Value #B', name: 'Uptime', unit: 'dtdurations' }],
        queries: [
          q(`max by (server, version, build, hostname, license_type) (${sel('flussonic_server_info', S)})`),
          q(`max by (server) (time() - ${sel('flussonic_server_start_time_seconds', S)})`),
          q(`max by (server, status) (${sel('flussonic_server_status', S)} == 1)`),
        ],
      }),

      // Over time, per server.

      row('Streams and traffic'),
      timeseries({
        title: 'Streams',
        description: 'Streams reported, alive, and down although they should be up (on-demand streams nobody watches excluded).',
        unit: 'none',
        queries: [
          q(`sum(${sel('job_server:flussonic_streams:count', S)})`, 'total'),
          q(`sum(${sel('job_server:flussonic_streams_alive:sum', S)})`, 'alive'),
          q(`sum(${sel('job_server:flussonic_streams_down:sum', S)})`, 'down'),
        ],
      }),
      timeseries({
        title: 'Clients',
        description: 'Clients connected to each server (total_clients).',
        unit: 'short',
        queries: [q(`sum by (server) (${sel('flussonic_server_clients', S)})`, '{{server}}')],
      }),
      timeseries({
        title: 'Input bandwidth',
        description: 'Incoming traffic of each server (input_kbit, in bytes per second).',
        unit: 'Bps',
        queries: [q(`sum by (server) (${sel('flussonic_server_input_bytes_per_second', S)})`, '{{server}}')],
      }),
      timeseries({
        title: 'Output bandwidth',
        description: 'Outgoing traffic of each server (output_kbit, in bytes per second).',
        unit: 'Bps',
        queries: [q(`sum by (server) (${sel('flussonic_server_output_bytes_per_second', S)})`, '{{server}}')],
      }),

      // Resources of each server and its GPUs.

      row('Load'),
      timeseries({
        title: 'CPU usage',
        description: 'CPU usage of each server (cpu_usage). FlussonicServerCpuHigh fires above 90% for 10 minutes.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        w: 8,
        thresholds: levels(0.8, 0.9),
        queries: [q(`max by (server) (${sel('flussonic_server_cpu_usage_ratio', S)})`, '{{server}}')],
      }),
      timeseries({
        title: 'Memory usage',
        description: 'Memory usage of each server (memory_usage).',
        unit: 'percentunit',
        min: 0,
        max: 1,
        w: 8,
        queries: [q(`max by (server) (${sel('flussonic_server_memory_usage_ratio', S)})`, '{{server}}')],
      }),
      timeseries({
        title: 'Scheduler load',
        description:
          'Erlang scheduler load of each server (scheduler_load). FlussonicServerSchedulerLoadHigh fires above 80% for 10 minutes.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        w: 8,
        thresholds: levels(0.7, 0.8),
        queries: [q(`max by (server) (${sel('flussonic_server_scheduler_load_ratio', S)})`, '{{server}}')],
      }),
      timeseries({
        title: 'GPU load',
        description: 'Streaming multiprocessor, encoder and decoder load of each transcoder device (GPU).',
        unit: 'percentunit',
        min: 0,
        max: 1,
        queries: [
          q(`max by (server, device) (${sel('flussonic_transcoder_device_sm_utilization_ratio', S)})`, '{{server}} GPU {{device}} SM'),
          q(`max by (server, device) (${sel('flussonic_transcoder_device_encoder_utilization_ratio', S)})`, '{{server}} GPU {{device}} encoder'),
          q(`max by (server, device) (${sel('flussonic_transcoder_device_decoder_utilization_ratio', S)})`, '{{server}} GPU {{device}} decoder'),
        ],
      }),
      barGauge({
        title: 'Partition usage',
        description: 'Used share of each disk partition of each server. FlussonicPartitionNearlyFull fires above 90%.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: levels(0.8, 0.9),
        queries: [q(`max by (server, path) (${sel('flussonic_server_partition_usage_ratio', S)})`, '{{server}} {{path}}')],
      }),
      barGauge({
        title: 'DVR storage usage',
        description: 'Used share of each DVR storage (GET /dvrs).',
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: levels(0.8, 0.9),
        queries: [
          q(
            `max by (server, dvr) (${sel('flussonic_dvr_storage_used_bytes', S)}) / max by (server, dvr) (${sel('flussonic_dvr_storage_size_bytes', S)})`,
            '{{server}} {{dvr}}',
          ),
        ],
      }),
      timeseries({
        title: 'Events resent and dropped',
        description: 'Events each server resent to, or dropped instead of delivering to, its event sinks.',
        unit: 'cps',
        queries: [
          q(`sum by (server) (rate(${sel('flussonic_server_events_resent_total', S)}[$__rate_interval]))`, '{{server}} resent'),
          q(`sum by (server) (rate(${sel('flussonic_server_events_dropped_total', S)}[$__rate_interval]))`, '{{server}} dropped'),
        ],
      }),

      // The ten worst streams now; click a stream for its detail dashboard.

      row('Worst streams'),
      table({
        title: 'Highest input delay',
        description: 'Streams with the longest time without frames from their input (ts_delay).',
        unit: 's',
        w: 12,
        hide: ['job'],
        sortBy: 'Value',
        links: [STREAM_DETAIL_ROW_LINK],
        queries: [q(`topk(10, max by (server, stream) (${sel('flussonic_stream_input_delay_seconds', S)}))`)],
      }),
      table({
        title: 'Most input restarts',
        description:
          'Streams whose input restarted most often, per minute over the last 5 minutes, on every Flussonic generation ' +
          '(recording rule job_server_stream:flussonic_stream_restarts:rate5m).',
        unit: 'cpm',
        w: 12,
        hide: ['job'],
        sortBy: 'Value',
        links: [STREAM_DETAIL_ROW_LINK],
        queries: [q(`topk(10, 60 * ${sel('job_server_stream:flussonic_stream_restarts:rate5m', S)})`)],
      }),
      table({
        title: 'Most dropped input packets',
        description: 'Streams dropping the most input packets per second (input_error_rate).',
        unit: 'pps',
        w: 12,
        hide: ['job'],
        sortBy: 'Value',
        links: [STREAM_DETAIL_ROW_LINK],
        queries: [q(`topk(10, max by (server, stream) (${sel('flussonic_stream_input_dropped_packets_per_second', S)}))`)],
      }),
      table({
        title: 'Most input errors',
        description:
          'Streams with the most input errors per second, all kinds together, over the last 5 minutes.',
        unit: 'cps',
        w: 12,
        hide: ['job'],
        sortBy: 'Value',
        links: [STREAM_DETAIL_ROW_LINK],
        queries: [q(`topk(10, ${sel('job_server_stream:flussonic_stream_input_errors:rate5m', S)})`)],
      }),

      // What Flussonic's event sink pushes (docs/events.md: needs events.enabled and the sink on
      // each server): transitions between two polls. Summed over the replicas that received them.
      row('Events'),
      timeseries({
        title: 'Events by kind',
        description: 'Events per second the servers pushed to the exporter\'s event sink, by kind.',
        unit: 'ops',
        queries: [q(`sum by (event) (rate(${sel('flussonic_events_total', S)}[$__rate_interval]))`, '{{event}}')],
      }),
      table({
        title: 'Most flapping streams',
        description: 'Streams that lost their source most often over the time range (source_closed events), also losses shorter than the poll interval.',
        unit: 'none',
        w: 12,
        hide: ['job'],
        sortBy: 'Value',
        links: [STREAM_DETAIL_ROW_LINK],
        queries: [q(`topk(10, sum by (server, stream) (increase(${sel('flussonic_stream_source_lost_total', S)}[$__range]))) > 0`)],
      }),
      heatmap({
        title: 'Play session durations',
        description: 'How long closed play sessions lasted (play_closed events: closed_at - opened_at), all protocols.',
        unit: 's',
        w: 24,
        queries: [q(`sum by (le) (rate(${sel('flussonic_play_session_duration_seconds_bucket', S)}[$__rate_interval]))`, '{{le}}')],
      }),
    ],
  });
}
