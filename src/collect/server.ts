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
import { familyByName, SERVER_STATUSES } from '../families/catalogue.js';
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

const F = {
  info: familyByName('flussonic_server_info'),
  status: familyByName('flussonic_server_status'),
  startTime: familyByName('flussonic_server_start_time_seconds'),
  cpu: familyByName('flussonic_server_cpu_usage_ratio'),
  memory: familyByName('flussonic_server_memory_usage_ratio'),
  scheduler: familyByName('flussonic_server_scheduler_load_ratio'),
  bandwidth: familyByName('flussonic_server_bandwidth_usage_ratio'),
  clients: familyByName('flussonic_server_clients'),
  streams: familyByName('flussonic_server_streams'),
  onlineStreams: familyByName('flussonic_server_online_streams'),
  openedFiles: familyByName('flussonic_server_opened_files'),
  inputBytes: familyByName('flussonic_server_input_bytes_per_second'),
  outputBytes: familyByName('flussonic_server_output_bytes_per_second'),
  eventsResent: familyByName('flussonic_server_events_resent_total'),
  eventsDropped: familyByName('flussonic_server_events_dropped_total'),
  partitionSize: familyByName('flussonic_server_partition_size_bytes'),
  partitionUsage: familyByName('flussonic_server_partition_usage_ratio'),
  partitionIo: familyByName('flussonic_server_partition_io_utilization_ratio'),
  deviceInfo: familyByName('flussonic_transcoder_device_info'),
  deviceTemperature: familyByName('flussonic_transcoder_device_temperature_celsius'),
  deviceEncoder: familyByName('flussonic_transcoder_device_encoder_utilization_ratio'),
  deviceDecoder: familyByName('flussonic_transcoder_device_decoder_utilization_ratio'),
  deviceSm: familyByName('flussonic_transcoder_device_sm_utilization_ratio'),
  deviceMemoryTotal: familyByName('flussonic_transcoder_device_memory_total_bytes'),
  deviceMemoryFree: familyByName('flussonic_transcoder_device_memory_free_bytes'),
  deviceMemoryUsed: familyByName('flussonic_transcoder_device_memory_used_bytes'),
} as const;

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
