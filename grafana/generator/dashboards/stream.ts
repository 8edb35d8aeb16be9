/** Stream detail: everything the exporter knows about one or more streams, over time. */
import { dashboard, type Dashboard } from '../board.js';
import { booleanMappings, levels, q, row, sel, stateTimeline, table, timeseries, valueMappings, type ValueMapping } from '../panels.js';
import { datasource, job, server, stream } from './variables.js';

const S = 'server';
const ST = 'stream';

/** stats.status encoded as one number, so that a state timeline shows it in one row per stream. */
const STATUS_MAPPINGS: ValueMapping[] = [
  valueMappings([
    ['unknown', 'text'],
    ['running', 'green'],
    ['waiting', 'blue'],
    ['error', 'red'],
  ]),
];

export function streamDashboard(): Dashboard {
  const f = (metric: string, ...extra: string[]) => sel(metric, S, ST, ...extra);
  return dashboard({
    uid: 'flussonic-stream',
    title: 'Flussonic / Stream detail',
    description: 'State, input, clients, tracks, transcoder and DVR of the selected streams.',
    tags: ['streams'],
    variables: [datasource(), job(), server(), stream()],
    time: 'now-3h',
    panels: [
      // Whether the streams run, and on which input.
      row('State'),
      stateTimeline({
        title: 'Alive',
        description: 'Whether the stream receives frames from its input (stats.alive; false after 12 s without frames).',
        unit: 'none',
        mappings: booleanMappings('down', 'alive'),
        queries: [q(`max by (server, stream) (${f('flussonic_stream_alive')})`, '{{server}} {{stream}}')],
      }),
      stateTimeline({
        title: 'Status',
        description:
          'stats.status: running (ready for viewers), waiting (awaits a publisher, or an on-demand stream awaits a viewer), error.',
        unit: 'none',
        mappings: STATUS_MAPPINGS,
        queries: [
          q(
            `max by (server, stream) (${f('flussonic_stream_status', 'status="running"')} or 2 * ${f('flussonic_stream_status', 'status="waiting"')} or 3 * ${f('flussonic_stream_status', 'status="error"')})`,
            '{{server}} {{stream}}',
          ),
        ],
      }),
      stateTimeline({
        title: 'Backup input active',
        description: 'Whether the stream runs on a backup input because its primary input failed (stats.backup_running).',
        unit: 'none',
        mappings: booleanMappings('primary', 'backup', 'green', 'orange'),
        queries: [q(`max by (server, stream) (${f('flussonic_stream_backup_active')})`, '{{server}} {{stream}}')],
      }),
      timeseries({
        title: 'Clients',
        description: 'Clients watching the stream (stats.online_clients).',
        unit: 'short',
        queries: [q(`sum by (server, stream) (${f('flussonic_stream_clients')})`, '{{server}} {{stream}}')],
      }),

      // What arrives from the source.

      row('Input'),
      timeseries({
        title: 'Bitrate in and out',
        description:
          'Input bitrate (stats.input_bitrate), bitrate of the output media (stats.output_bitrate, not reported ' +
          'by Flussonic 2025 and later) and the stream bitrate (stats.bitrate).',
        unit: 'Bps',
        queries: [
          q(`max by (server, stream) (${f('flussonic_stream_input_bitrate_bytes_per_second')})`, '{{stream}} in'),
          q(`max by (server, stream) (${f('flussonic_stream_output_bitrate_bytes_per_second')})`, '{{stream}} out'),
          q(`max by (server, stream) (${f('flussonic_stream_bitrate_bytes_per_second')})`, '{{stream}} stream'),
        ],
      }),
      timeseries({
        title: 'Traffic',
        description: 'Bytes received from the input and sent to clients per second, and the bandwidth to all clients.',
        unit: 'Bps',
        queries: [
          q(`sum by (server, stream) (rate(${f('flussonic_stream_received_bytes_total')}[$__rate_interval]))`, '{{stream}} received'),
          q(`sum by (server, stream) (rate(${f('flussonic_stream_sent_bytes_total')}[$__rate_interval]))`, '{{stream}} sent'),
          q(`max by (server, stream) (${f('flussonic_stream_output_bandwidth_bytes_per_second')})`, '{{stream}} to clients'),
        ],
      }),
      timeseries({
        title: 'Input delay',
        description: 'Time without frames from the input (stats.ts_delay). The stream stops being alive above 12 s.',
        unit: 's',
        thresholds: levels(5, 12),
        queries: [q(`max by (server, stream) (${f('flussonic_stream_input_delay_seconds')})`, '{{server}} {{stream}}')],
      }),
      timeseries({
        title: 'Dropped input packets',
        description: 'Input packets dropped per second (stats.input_error_rate).',
        unit: 'pps',
        queries: [q(`max by (server, stream) (${f('flussonic_stream_input_dropped_packets_per_second')})`, '{{server}} {{stream}}')],
      }),
      timeseries({
        title: 'Input errors by kind',
        description: 'Input errors per second by kind.',
        unit: 'cps',
        queries: [
          q(`sum by (server, stream, error) (rate(${f('flussonic_stream_input_errors_total')}[$__rate_interval]))`, '{{stream}} {{error}}'),
        ],
      }),
      timeseries({
        title: 'Input restarts and switches',
        description:
          'Restarts of the input per minute, averaged over 5 minutes, on every Flussonic generation (recording rule ' +
          'job_server_stream:flussonic_stream_restarts:rate5m: stats.retry_count on 23.x/24.x, what the 2025 shape ' +
          'carries there; see its comment in rules/flussonic-streams.rules.yml), and switches between inputs per ' +
          'minute (stats.input.input_switches, Flussonic 2025 and later).',
        unit: 'cpm',
        queries: [
          q(`60 * sum by (server, stream) (${f('job_server_stream:flussonic_stream_restarts:rate5m')})`, '{{stream}} restarts'),
          q(`60 * sum by (server, stream) (rate(${f('flussonic_stream_input_switches_total')}[$__rate_interval]))`, '{{stream}} input switches'),
        ],
      }),

      // Each input of the streams (input = its index, as in /streams/{name}/inputs/{index}): which
      // one fails, and whether the stream runs on a backup.
      row('Inputs'),
      stateTimeline({
        title: 'Input active',
        description: 'Which input of the stream is the one in use (inputs[].stats.active); input = its index in the stream config, 0 is the primary.',
        unit: 'none',
        mappings: booleanMappings('standby', 'active', 'text', 'green'),
        queries: [q(`max by (server, stream, input) (${f('flussonic_stream_input_active')})`, '{{stream}} input {{input}}')],
      }),
      stateTimeline({
        title: 'Input error',
        description: 'Whether each input reports an error (inputs[].stats.error).',
        unit: 'none',
        mappings: booleanMappings('ok', 'error', 'green', 'red'),
        queries: [q(`max by (server, stream, input) (${f('flussonic_stream_input_error')})`, '{{stream}} input {{input}}')],
      }),
      timeseries({
        title: 'Input traffic',
        description: 'Bytes per second received on each input (inputs[].stats.bytes).',
        unit: 'Bps',
        w: 8,
        queries: [
          q(`sum by (server, stream, input) (rate(${f('flussonic_stream_input_received_bytes_total')}[$__rate_interval]))`, '{{stream}} input {{input}}'),
        ],
      }),
      timeseries({
        title: 'Time since last frame',
        description: 'Seconds since each input delivered its last frame (inputs[].stats.last_dts_at): rising means the input stalls.',
        unit: 's',
        w: 8,
        thresholds: levels(5, 12),
        queries: [
          q(`max by (server, stream, input) (time() - ${f('flussonic_stream_input_last_frame_timestamp_seconds')})`, '{{stream}} input {{input}}'),
        ],
      }),
      timeseries({
        title: 'Input connection age',
        description: 'How long each input has been connected (its start time in inputs[].stats): a drop to zero is a reconnect.',
        unit: 's',
        w: 8,
        queries: [
          q(`max by (server, stream, input) (time() - ${f('flussonic_stream_input_start_time_seconds')})`, '{{stream}} input {{input}}'),
        ],
      }),

      // Media tracks of the streams (stats.media_info).

      row('Tracks'),
      table({
        title: 'Tracks',
        description: 'Codec, resolution, language, bitrate, frame rate and GOP of each media track.',
        unit: 'short',
        merge: true,
        hide: ['job', 'Value #A'],
        columns: [
          { field: 'Value #B', name: 'Bitrate', unit: 'Bps' },
          { field: 'Value #C', name: 'Frame rate (fps)', unit: 'short' },
          { field: 'Value #D', name: 'GOP (frames)', unit: 'short' },
        ],
        queries: [
          q(`max by (server, stream, track, content, codec, width, height, language) (${f('flussonic_stream_track_info')})`),
          q(`max by (server, stream, track) (${f('flussonic_stream_track_bitrate_bytes_per_second')})`),
          q(`max by (server, stream, track) (${f('flussonic_stream_track_frames_per_second')})`),
          q(`max by (server, stream, track) (${f('flussonic_stream_track_gop_frames')})`),
        ],
      }),
      timeseries({
        title: 'Track bitrate',
        description: 'Bitrate of each media track.',
        unit: 'Bps',
        queries: [
          q(`max by (server, stream, track, content) (${f('flussonic_stream_track_bitrate_bytes_per_second')})`, '{{stream}} {{track}} ({{content}})'),
        ],
      }),
      timeseries({
        title: 'Track frame rate',
        description: 'Frames per second of each video track (avg_fps).',
        unit: 'short',
        queries: [q(`max by (server, stream, track) (${f('flussonic_stream_track_frames_per_second')})`, '{{stream}} {{track}}')],
      }),

      // The transcoder of the streams, where they transcode.

      row('Transcoder'),
      stateTimeline({
        title: 'Transcoder running',
        description: 'Whether the transcoder of the stream runs (stats.running_transcoder).',
        unit: 'none',
        mappings: booleanMappings('stopped', 'running', 'text', 'green'),
        queries: [q(`max by (server, stream) (${f('flussonic_stream_transcoder_running')})`, '{{server}} {{stream}}')],
      }),
      stateTimeline({
        title: 'Transcoder overloaded',
        description: 'Whether the transcoder cannot keep up with real time (stats.transcoder_overloaded).',
        unit: 'none',
        mappings: booleanMappings('ok', 'overloaded', 'green', 'red'),
        queries: [q(`max by (server, stream) (${f('flussonic_stream_transcoder_overloaded')})`, '{{server}} {{stream}}')],
      }),
      table({
        title: 'Transcoder',
        description: 'Device kind (hw), target and number of output video qualities of each transcoder.',
        unit: 'short',
        w: 12,
        merge: true,
        hide: ['job', 'Value #A'],
        columns: [{ field: 'Value #B', name: 'Qualities' }],
        queries: [
          q(`max by (server, stream, hw, target) (${f('flussonic_stream_transcoder_info')})`),
          q(`max by (server, stream) (${f('flussonic_stream_transcoder_qualities')})`),
        ],
      }),
      timeseries({
        title: 'Transcoder restarts',
        description: 'Restarts of the transcoder per minute.',
        unit: 'cpm',
        queries: [
          q(`60 * sum by (server, stream) (rate(${f('flussonic_stream_transcoder_restarts_total')}[$__rate_interval]))`, '{{server}} {{stream}}'),
        ],
      }),
      timeseries({
        title: 'Transcoder frames',
        description: 'Frames per second the transcoder processed, dropped over the limit, and duplicated to keep the frame rate.',
        unit: 'short',
        w: 24,
        queries: [
          q(`sum by (server, stream) (rate(${f('flussonic_stream_transcoder_frames_total')}[$__rate_interval]))`, '{{stream}} processed'),
          q(`sum by (server, stream) (rate(${f('flussonic_stream_transcoder_dropped_frames_total')}[$__rate_interval]))`, '{{stream}} dropped'),
          q(`sum by (server, stream) (rate(${f('flussonic_stream_transcoder_duplicated_frames_total')}[$__rate_interval]))`, '{{stream}} duplicated'),
        ],
      }),

      // Archive of the streams and their pushes to other servers.

      row('DVR and pushes'),
      timeseries({
        title: 'DVR depth',
        description: 'How far back the DVR archive of the stream reaches (stats.dvr_info.depth).',
        unit: 's',
        w: 8,
        queries: [q(`max by (server, stream) (${f('flussonic_stream_dvr_depth_seconds')})`, '{{server}} {{stream}}')],
      }),
      timeseries({
        title: 'DVR size',
        description: 'Size of the DVR archive of the stream (stats.dvr_info.bytes).',
        unit: 'bytes',
        w: 8,
        queries: [q(`max by (server, stream) (${f('flussonic_stream_dvr_size_bytes')})`, '{{server}} {{stream}}')],
      }),
      timeseries({
        title: 'Push traffic',
        description: 'Bytes per second sent by each push of the stream (push = its index).',
        unit: 'Bps',
        w: 8,
        queries: [
          q(`sum by (server, stream, push) (rate(${f('flussonic_stream_push_sent_bytes_total')}[$__rate_interval]))`, '{{stream}} push {{push}}'),
        ],
      }),
    ],
  });
}
