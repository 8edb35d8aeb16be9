/**
 * Collector `server`: GET /config/stats once per poll, mapped to the flussonic_server_* and
 * flussonic_transcoder_device_* families of the catalogue (design/metrics.md "Server" and
 * "Transcoder devices / GPUs").
 *
 * /config/stats is one document, so there is no walk and no `select`. It carries fields that must
 * never reach /metrics (`license_txt`, the runtime `id`, `config_error` details); they are simply
 * never read. A server without transcoding devices has no `transcoder_devices`: that gives no
 * device series and is not an error.
 */
import type { JsonObject } from '../flussonic/api.js';
import type { Partition, ServerEvents, ServerStats, TranscoderDevice } from '../flussonic/types.js';
import { defineFamilies } from '../families/define.js';
import { BOOLEAN, NON_NEGATIVE } from '../families/ranges.js';
import type { SeriesWriter } from '../render/series.js';
import {
  addNumber,
  addStateSet,
  arrayField,
  kbitPerSecondToBytes,
  labelText,
  MIB,
  mibToBytes,
  objectField,
  percentToRatio,
  type Unit,
} from './fields.js';
import type { Collector, CollectContext } from './types.js';

export const SERVER_STATUSES = ['no_config', 'broken_config', 'license_failure', 'no_license', 'starting', 'running'] as const;

const S = ['server'] as const;
const SD = ['server', 'device'] as const;
const PART = ['server', 'path', 'device'] as const;

/** The families of GET /config/stats: the server's figures, its partitions and its transcoder devices (GPUs). */
export const SERVER_FAMILIES = defineFamilies(
  'server',
  {
    info: { name: 'flussonic_server_info', type: 'gauge', labels: ['server', 'version', 'build', 'hostname', 'license_type'],
      help: 'Flussonic server version, build, hostname and license type; value 1.' },
    status: { name: 'flussonic_server_status', type: 'gauge', labels: ['server', 'status'], range: BOOLEAN,
      help: 'Streamer status as a state set (streamer_status): 1 for the current status, 0 for the others.' },
    startTime: { name: 'flussonic_server_start_time_seconds', type: 'gauge', labels: S,
      help: 'Unix time when the Flussonic server started (started_at).' },
    cpu: { name: 'flussonic_server_cpu_usage_ratio', type: 'gauge', labels: S,
      help: 'CPU usage of the server, 0..1 (cpu_usage / 100).' },
    memory: { name: 'flussonic_server_memory_usage_ratio', type: 'gauge', labels: S,
      help: 'Memory usage of the server, 0..1 (memory_usage / 100).' },
    scheduler: { name: 'flussonic_server_scheduler_load_ratio', type: 'gauge', labels: S, range: NON_NEGATIVE,
      help: 'Erlang scheduler load of the server, 0..1 (scheduler_load / 100).' },
    bandwidth: { name: 'flussonic_server_bandwidth_usage_ratio', type: 'gauge', labels: S, range: NON_NEGATIVE,
      help: 'Network bandwidth usage of the server, 0..1 (bandwidth_usage / 100).' },
    clients: { name: 'flussonic_server_clients', type: 'gauge', labels: S,
      help: 'Clients connected to the server (total_clients).' },
    streams: { name: 'flussonic_server_streams', type: 'gauge', labels: S,
      help: 'Streams configured on the server (total_streams).' },
    onlineStreams: { name: 'flussonic_server_online_streams', type: 'gauge', labels: S,
      help: 'Streams online on the server (online_streams).' },
    openedFiles: { name: 'flussonic_server_opened_files', type: 'gauge', labels: S,
      help: 'Files opened by the server (opened_files).' },
    inputBytes: { name: 'flussonic_server_input_bytes_per_second', type: 'gauge', labels: S,
      help: 'Incoming traffic of the server in bytes per second (input_kbit x 125).' },
    outputBytes: { name: 'flussonic_server_output_bytes_per_second', type: 'gauge', labels: S,
      help: 'Outgoing traffic of the server in bytes per second (output_kbit x 125).' },
    eventsResent: { name: 'flussonic_server_events_resent_total', type: 'counter', labels: S,
      help: 'Events the server resent to event sinks (events.resent_events).' },
    eventsDropped: { name: 'flussonic_server_events_dropped_total', type: 'counter', labels: S,
      help: 'Events the server dropped (events.dropped_events).' },
    partitionSize: { name: 'flussonic_server_partition_size_bytes', type: 'gauge', labels: PART,
      help: 'Size of a disk partition in bytes (partitions[].total_mb x 1048576).' },
    partitionUsage: { name: 'flussonic_server_partition_usage_ratio', type: 'gauge', labels: PART,
      help: 'Used share of a disk partition, 0..1 (partitions[].usage / 100).' },
    partitionIo: { name: 'flussonic_server_partition_io_utilization_ratio', type: 'gauge', labels: PART,
      help: 'IO utilization of the device behind a partition, 0..1 (partitions[].io_util / 100).' },
    deviceInfo: { name: 'flussonic_transcoder_device_info', type: 'gauge', labels: ['server', 'device', 'type', 'name', 'uuid'],
      help: 'Transcoder device (GPU, CPU, coder) type, name and uuid; value 1.' },
    deviceTemperature: { name: 'flussonic_transcoder_device_temperature_celsius', type: 'gauge', labels: SD,
      help: 'GPU temperature in degrees Celsius (gpu_temp).' },
    deviceEncoder: { name: 'flussonic_transcoder_device_encoder_utilization_ratio', type: 'gauge', labels: SD,
      help: 'GPU encoder load, 0..1 (gpu_enc / 100).' },
    deviceDecoder: { name: 'flussonic_transcoder_device_decoder_utilization_ratio', type: 'gauge', labels: SD,
      help: 'GPU decoder load, 0..1 (gpu_dec / 100).' },
    deviceSm: { name: 'flussonic_transcoder_device_sm_utilization_ratio', type: 'gauge', labels: SD,
      help: 'GPU streaming multiprocessor load, 0..1 (gpu_sm / 100).' },
    deviceMemoryTotal: { name: 'flussonic_transcoder_device_memory_total_bytes', type: 'gauge', labels: SD,
      help: 'Total device memory in bytes (memTotal; the unit is undocumented: values below 1048576 are taken as MiB, larger ones as bytes).' },
    deviceMemoryFree: { name: 'flussonic_transcoder_device_memory_free_bytes', type: 'gauge', labels: SD,
      help: 'Free device memory in bytes (memFree; values below 1048576 are taken as MiB, larger ones as bytes).' },
    deviceMemoryUsed: { name: 'flussonic_transcoder_device_memory_used_bytes', type: 'gauge', labels: SD,
      help: 'Used device memory in bytes (memUsed; values below 1048576 are taken as MiB, larger ones as bytes).' },
  },
);
const F = SERVER_FAMILIES;

/** Maps the whole /config/stats document. */
export function mapServerStats(out: SeriesWriter, doc: JsonObject): void {
  const stats = doc as ServerStats;
  mapIdentity(out, stats);
  mapLoad(out, stats);
  mapEvents(out, objectField<ServerEvents>(out, F.eventsResent, [], stats.events));
  mapPartitions(out, arrayField(out, F.partitionSize, [], stats.partitions));
  mapTranscoderDevices(out, arrayField(out, F.deviceInfo, [], stats.transcoder_devices));
}

function mapIdentity(out: SeriesWriter, stats: ServerStats): void {
  out.add(
    F.info,
    [labelText(stats.server_version), labelText(stats.build), labelText(stats.hostname), labelText(stats.license_type)],
    1,
  );
  addStateSet(out, F.status, [], SERVER_STATUSES, stats.streamer_status);
  addNumber(out, F.startTime, [], stats.started_at); // already Unix seconds (format `utc`)
}

function mapLoad(out: SeriesWriter, stats: ServerStats): void {
  addNumber(out, F.cpu, [], stats.cpu_usage, percentToRatio);
  addNumber(out, F.memory, [], stats.memory_usage, percentToRatio);
  addNumber(out, F.scheduler, [], stats.scheduler_load, percentToRatio);
  addNumber(out, F.bandwidth, [], stats.bandwidth_usage, percentToRatio);
  addNumber(out, F.clients, [], stats.total_clients);
  addNumber(out, F.streams, [], stats.total_streams);
  addNumber(out, F.onlineStreams, [], stats.online_streams);
  addNumber(out, F.openedFiles, [], stats.opened_files);
  addNumber(out, F.inputBytes, [], stats.input_kbit, kbitPerSecondToBytes);
  addNumber(out, F.outputBytes, [], stats.output_kbit, kbitPerSecondToBytes);
}

function mapEvents(out: SeriesWriter, events: Readonly<ServerEvents> | undefined): void {
  if (!events) return;
  addNumber(out, F.eventsResent, [], events.resent_events);
  addNumber(out, F.eventsDropped, [], events.dropped_events);
}

function mapPartitions(out: SeriesWriter, partitions: readonly unknown[]): void {
  const seen = new Set<string>();
  for (const raw of partitions) {
    const p = objectField<Partition>(out, F.partitionSize, [], raw);
    if (!p) continue;
    const labels = [labelText(p.path), labelText(p.device)];
    const key = JSON.stringify(labels);
    if (seen.has(key)) continue; // the same mount twice would be a duplicate series
    seen.add(key);
    addNumber(out, F.partitionSize, labels, p.total_mb, mibToBytes);
    addNumber(out, F.partitionUsage, labels, p.usage, percentToRatio);
    addNumber(out, F.partitionIo, labels, p.io_util, percentToRatio);
  }
}

/**
 * Device memory has no documented unit. No transcoding device has under 1 MiB of memory, so a
 * value below 1048576 is MiB (as nvidia-smi reports it) and a larger one is bytes.
 */
export const deviceMemoryToBytes: Unit = (v) => (v < MIB ? v * MIB : v);

function mapTranscoderDevices(out: SeriesWriter, devices: readonly unknown[]): void {
  const seen = new Set<string>();
  for (const [i, raw] of devices.entries()) {
    const d = objectField<TranscoderDevice>(out, F.deviceInfo, [], raw);
    if (!d) continue;
    // `device` is the id (an integer, or `auto`); its position stands in where it is missing.
    const device = labelText(d.id) || String(i);
    if (seen.has(device)) continue;
    seen.add(device);
    const labels = [device];
    out.add(F.deviceInfo, [device, labelText(d.type), labelText(d.name), labelText(d.uuid)], 1);
    addNumber(out, F.deviceTemperature, labels, d.gpu_temp);
    addNumber(out, F.deviceEncoder, labels, d.gpu_enc, percentToRatio);
    addNumber(out, F.deviceDecoder, labels, d.gpu_dec, percentToRatio);
    addNumber(out, F.deviceSm, labels, d.gpu_sm, percentToRatio);
    addNumber(out, F.deviceMemoryTotal, labels, d.memTotal, deviceMemoryToBytes);
    addNumber(out, F.deviceMemoryFree, labels, d.memFree, deviceMemoryToBytes);
    addNumber(out, F.deviceMemoryUsed, labels, d.memUsed, deviceMemoryToBytes);
  }
}

/** Reads GET /config/stats and maps it. */
export async function collectServer(ctx: CollectContext): Promise<void> {
  const doc = await ctx.client.getJson('/config/stats', '/config/stats', ctx.signal);
  mapServerStats(ctx.out, doc);
}

export function createServerCollector(): Collector {
  return { collect: collectServer };
}
