/** Transcoders and GPUs: the transcoder devices of each server and the transcoders of the streams. */
import { dashboard, type Dashboard } from '../board.js';
import { booleanMappings, levels, q, row, sel, stat, stateTimeline, table, timeseries } from '../panels.js';
import { datasource, job, server, stream } from './variables.js';

const S = 'server';
const ST = 'stream';

export function transcodersDashboard(): Dashboard {
  const device = (metric: string) => sel(metric, S);
  const transcoder = (metric: string) => sel(metric, S, ST);
  const perDevice = (metric: string) => `max by (server, device) (${device(metric)})`;
  return dashboard({
    uid: 'flussonic-transcoders',
    title: 'Flussonic / Transcoders and GPUs',
    description: 'Temperature, load and memory of each transcoder device (GPU); state and frames of the stream transcoders.',
    tags: ['transcoders', 'gpu'],
    variables: [datasource(), job(), server(), stream()],
    panels: [
      // Transcoder devices of the selected servers (transcoder_devices of /config/stats).
      row('Devices'),
      table({
        title: 'Devices',
        description: 'Each transcoder device: type, name, and total memory.',
        unit: 'bytes',
        h: 6,
        merge: true,
        hide: ['job', 'uuid', 'Value #A'],
        columns: [{ field: 'Value #B', name: 'Memory', unit: 'bytes' }],
        queries: [
          q(`max by (server, device, type, name, uuid) (${device('flussonic_transcoder_device_info')})`),
          q(perDevice('flussonic_transcoder_device_memory_total_bytes')),
        ],
      }),
      timeseries({
        title: 'GPU temperature',
        description: 'Temperature of each GPU (gpu_temp). FlussonicGpuTemperatureHigh fires above 85 °C for 5 minutes.',
        unit: 'celsius',
        thresholds: levels(80, 85),
        queries: [q(perDevice('flussonic_transcoder_device_temperature_celsius'), '{{server}} GPU {{device}}')],
      }),
      timeseries({
        title: 'Encoder load',
        description: 'Load of the video encoder of each GPU (gpu_enc). FlussonicGpuEncoderSaturated fires above 90% for 10 minutes.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        w: 8,
        thresholds: levels(0.8, 0.9),
        queries: [q(perDevice('flussonic_transcoder_device_encoder_utilization_ratio'), '{{server}} GPU {{device}}')],
      }),
      timeseries({
        title: 'Decoder load',
        description: 'Load of the video decoder of each GPU (gpu_dec). FlussonicGpuDecoderSaturated fires above 90% for 10 minutes.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        w: 8,
        thresholds: levels(0.8, 0.9),
        queries: [q(perDevice('flussonic_transcoder_device_decoder_utilization_ratio'), '{{server}} GPU {{device}}')],
      }),
      timeseries({
        title: 'SM load',
        description: 'Load of the streaming multiprocessors of each GPU (gpu_sm): scaling, filters, overlays.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        w: 8,
        queries: [q(perDevice('flussonic_transcoder_device_sm_utilization_ratio'), '{{server}} GPU {{device}}')],
      }),
      timeseries({
        title: 'GPU memory used',
        description: 'Device memory in use on each GPU (memUsed).',
        unit: 'bytes',
        queries: [q(perDevice('flussonic_transcoder_device_memory_used_bytes'), '{{server}} GPU {{device}}')],
      }),
      timeseries({
        title: 'GPU memory usage',
        description: 'Share of the device memory in use on each GPU (memUsed / memTotal, recording rule).',
        unit: 'percentunit',
        min: 0,
        max: 1,
        queries: [
          q(`max by (server, device) (${device('job_server_device:flussonic_transcoder_device_memory_used:ratio')})`, '{{server}} GPU {{device}}'),
        ],
      }),

      // Transcoders of the selected streams.

      row('Stream transcoders'),
      stat({
        title: 'Transcoders running',
        description: 'Streams whose transcoder runs now (stats.running_transcoder).',
        unit: 'none',
        w: 6,
        queries: [q(`sum(${transcoder('flussonic_stream_transcoder_running')})`, 'running')],
      }),
      stat({
        title: 'Transcoders overloaded',
        description: 'Transcoders that cannot keep up with real time now (stats.transcoder_overloaded).',
        unit: 'none',
        w: 6,
        thresholds: levels(1, 1),
        queries: [q(`sum(${transcoder('flussonic_stream_transcoder_overloaded')}) or vector(0)`, 'overloaded')],
      }),
      table({
        title: 'Transcoder state',
        description:
          'Every transcoder of the selected streams with its device kind (hw) and target (stats.transcoder, Flussonic ' +
          '2025 and later; without them on older servers), overloaded ones first. ' +
          'FlussonicTranscoderOverloaded fires after 5 minutes of overload.',
        unit: 'none',
        w: 12,
        h: 4,
        hide: ['job'],
        sortBy: 'State',
        mappings: booleanMappings('ok', 'overloaded', 'green', 'red'),
        columns: [{ field: 'Value', name: 'State' }],
        queries: [
          // Older servers have no stats.transcoder (hw, target): their transcoders are listed without.
          q(
            `(max by (server, stream) (${transcoder('flussonic_stream_transcoder_overloaded')}) * on (server, stream) group_left (hw, target) max by (server, stream, hw, target) (${transcoder('flussonic_stream_transcoder_info')})) or max by (server, stream) (${transcoder('flussonic_stream_transcoder_overloaded')})`,
          ),
        ],
      }),
      stateTimeline({
        title: 'Transcoder overloaded over time',
        description: 'Whether each transcoder was overloaded (stats.transcoder_overloaded).',
        unit: 'none',
        w: 24,
        mappings: booleanMappings('ok', 'overloaded', 'green', 'red'),
        queries: [q(`max by (server, stream) (${transcoder('flussonic_stream_transcoder_overloaded')})`, '{{server}} {{stream}}')],
      }),
      timeseries({
        title: 'Transcoded frames',
        description: 'Frames per second each transcoder processed.',
        unit: 'short',
        queries: [
          q(`sum by (server, stream) (rate(${transcoder('flussonic_stream_transcoder_frames_total')}[$__rate_interval]))`, '{{server}} {{stream}}'),
        ],
      }),
      timeseries({
        title: 'Dropped and duplicated frames',
        description: 'Frames per second the transcoders dropped over the limit or duplicated to keep the frame rate: both mean the transcoder or its input cannot keep pace.',
        unit: 'short',
        queries: [
          q(`sum by (server, stream) (rate(${transcoder('flussonic_stream_transcoder_dropped_frames_total')}[$__rate_interval]))`, '{{stream}} dropped'),
          q(`sum by (server, stream) (rate(${transcoder('flussonic_stream_transcoder_duplicated_frames_total')}[$__rate_interval]))`, '{{stream}} duplicated'),
        ],
      }),
      timeseries({
        title: 'Transcoder restarts',
        description: 'Restarts of each transcoder per minute.',
        unit: 'cpm',
        queries: [
          q(`60 * sum by (server, stream) (rate(${transcoder('flussonic_stream_transcoder_restarts_total')}[$__rate_interval]))`, '{{server}} {{stream}}'),
        ],
      }),
      timeseries({
        title: 'Transcoders per device kind',
        description: 'Running transcoders by device kind (cpu, nvenc, qsv, ...).',
        unit: 'none',
        stack: true,
        queries: [
          q(
            `count by (server, hw) (${transcoder('flussonic_stream_transcoder_info')} * on (job, instance, server, stream) group_left () (${transcoder('flussonic_stream_transcoder_running')} == 1))`,
            '{{server}} {{hw}}',
          ),
        ],
      }),
    ],
  });
}
