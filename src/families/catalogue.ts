/**
 * The metric catalogue: every family the exporter can expose, with its type, labels and HELP.
 * It is the public contract of design/metrics.md in code. METRICS.md is generated from it and a
 * test checks the two against each other, so dashboards and docs cannot drift from the code.
 */

import { rangeFor, type ValueRange } from './ranges.js';

export type MetricType = 'gauge' | 'counter' | 'histogram';

/** Which part of the exporter fills a family: a collector, or the exporter itself. */
export type FamilyOwner = 'self' | 'server' | 'streams' | 'sessions' | 'dvrs' | 'cluster' | 'operations';

export interface FamilyDef {
  readonly name: string;
  readonly type: MetricType;
  readonly owner: FamilyOwner;
  /**
   * Label names in exposition order. For the sessions families the grouping labels are configured
   * (`group_by`), so `labels` lists only the fixed ones and `groupByLabels` is true.
   */
  readonly labels: readonly string[];
  readonly help: string;
  readonly groupByLabels?: boolean;
  /** Valid values (src/families/ranges.ts): a value outside is not exported but counted. */
  readonly range: ValueRange;
}

function family(
  name: string,
  type: MetricType,
  owner: FamilyOwner,
  labels: readonly string[],
  help: string,
  extra: { groupByLabels?: boolean } = {},
): FamilyDef {
  return Object.freeze({ name, type, owner, labels: Object.freeze([...labels]), help, ...extra, range: rangeFor(name, type) });
}

const S = ['server'] as const;
const SS = ['server', 'stream'] as const;
const SSI = ['server', 'stream', 'input'] as const;
const SD = ['server', 'device'] as const;
const SC = ['server', 'collector'] as const;
const PART = ['server', 'path', 'device'] as const;
const PEER = ['server', 'peer'] as const;

export const SERVER_STATUSES = ['no_config', 'broken_config', 'license_failure', 'no_license', 'starting', 'running'] as const;
export const STREAM_STATUSES = ['running', 'waiting', 'error'] as const;
export const TRANSCODER_AD_MARKER_KINDS = [
  'input_ad_announces',
  'output_ad_announces',
  'output_shifted_ad_announces',
  'input_ad_immediate',
  'output_ad_immediate',
] as const;
export { SESSION_GROUP_BY_ALLOWED, SESSION_GROUP_BY_DEFAULT } from '../config/switches.js';
/** Buckets of flussonic_session_duration_seconds: 10 s to 24 h. */
export const SESSION_DURATION_BUCKETS = [10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400] as const;

export const CATALOGUE: readonly FamilyDef[] = Object.freeze([
  // Exporter self-metrics
  family('flussonic_up', 'gauge', 'self', S, '1 when the last poll of every enabled collector for this server succeeded, else 0.'),
  family('flussonic_exporter_collector_success', 'gauge', 'self', SC, 'Whether the last poll of this collector succeeded (1) or failed (0).'),
  family('flussonic_exporter_collector_duration_seconds', 'gauge', 'self', SC, 'Wall time of the last poll of this collector, in seconds.'),
  family('flussonic_exporter_last_success_timestamp_seconds', 'gauge', 'self', SC, 'Unix time when this collector last succeeded.'),
  family('flussonic_exporter_api_requests_total', 'counter', 'self', ['server', 'endpoint', 'code'], 'HTTP requests made to the upstream API, by status code (code="error" when no response arrived).'),
  family('flussonic_exporter_api_errors_total', 'counter', 'self', ['server', 'endpoint', 'reason'], 'Failed upstream requests by reason: timeout, connection, http, invalid_json, too_large, cursor_loop, auth, shape (a JSON document of the wrong form).'),
  family('flussonic_exporter_api_response_bytes_total', 'counter', 'self', ['server', 'endpoint'], 'Response body bytes read from the upstream API.'),
  family('flussonic_exporter_series_dropped_total', 'counter', 'self', SC, 'Series not exported because a cardinality limit (max_series) was hit.'),
  family('flussonic_exporter_invalid_values_total', 'counter', 'self', ['server', 'family'], 'Upstream values outside their family\'s valid range (counters >= 0, ratios 0..1, sane timestamps and temperatures), not exported.'),
  family('flussonic_exporter_series_shed_total', 'counter', 'self', ['server', 'collector', 'family'], 'Series of a whole family not exported because the collector\'s max_series was reached: optional families are shed first, then default ones (docs/cardinality.md).'),
  family('flussonic_exporter_build_info', 'gauge', 'self', ['version', 'revision', 'nodejs_version'], 'Build information of the exporter (revision: git commit at build time, unknown outside git); value 1.'),
  family('flussonic_exporter_demo', 'gauge', 'self', [], '1 when the exporter runs in demo mode on simulated data, else 0.'),
  family('flussonic_exporter_config_last_reload_success', 'gauge', 'self', [], '1 if the last configuration (re)load succeeded, else 0.'),
  family('flussonic_exporter_config_last_reload_success_timestamp_seconds', 'gauge', 'self', [], 'Unix time of the last successful configuration (re)load.'),
  family('flussonic_exporter_shard_info', 'gauge', 'self', ['shard', 'total_shards'], 'Which shard this replica is (--shard/--total-shards or the StatefulSet ordinal); value 1.'),
  family('flussonic_exporter_owned_targets', 'gauge', 'self', ['kind'], 'Targets this replica polls after discovery and sharding, by kind (server, catena).'),
  family('flussonic_exporter_discovery_targets', 'gauge', 'self', ['source'], 'Servers the last good refresh of this discovery source found (before sharding).'),
  family('flussonic_exporter_discovery_failures_total', 'counter', 'self', ['source'], 'Failed refreshes of this discovery source; the last good list is kept.'),
  family('flussonic_exporter_discovery_last_success_timestamp_seconds', 'gauge', 'self', ['source'], 'Unix time of the last successful refresh of this discovery source.'),

  // Server: GET /config/stats
  family('flussonic_server_info', 'gauge', 'server', ['server', 'version', 'build', 'hostname', 'license_type'], 'Flussonic server version, build, hostname and license type; value 1.'),
  family('flussonic_server_status', 'gauge', 'server', ['server', 'status'], 'Streamer status as a state set (streamer_status): 1 for the current status, 0 for the others.'),
  family('flussonic_server_start_time_seconds', 'gauge', 'server', S, 'Unix time when the Flussonic server started (started_at).'),
  family('flussonic_server_cpu_usage_ratio', 'gauge', 'server', S, 'CPU usage of the server, 0..1 (cpu_usage / 100).'),
  family('flussonic_server_memory_usage_ratio', 'gauge', 'server', S, 'Memory usage of the server, 0..1 (memory_usage / 100).'),
  family('flussonic_server_scheduler_load_ratio', 'gauge', 'server', S, 'Erlang scheduler load of the server, 0..1 (scheduler_load / 100).'),
  family('flussonic_server_bandwidth_usage_ratio', 'gauge', 'server', S, 'Network bandwidth usage of the server, 0..1 (bandwidth_usage / 100).'),
  family('flussonic_server_clients', 'gauge', 'server', S, 'Clients connected to the server (total_clients).'),
  family('flussonic_server_streams', 'gauge', 'server', S, 'Streams configured on the server (total_streams).'),
  family('flussonic_server_online_streams', 'gauge', 'server', S, 'Streams online on the server (online_streams).'),
  family('flussonic_server_opened_files', 'gauge', 'server', S, 'Files opened by the server (opened_files).'),
  family('flussonic_server_input_bytes_per_second', 'gauge', 'server', S, 'Incoming traffic of the server in bytes per second (input_kbit x 125).'),
  family('flussonic_server_output_bytes_per_second', 'gauge', 'server', S, 'Outgoing traffic of the server in bytes per second (output_kbit x 125).'),
  family('flussonic_server_events_resent_total', 'counter', 'server', S, 'Events the server resent to event sinks (events.resent_events).'),
  family('flussonic_server_events_dropped_total', 'counter', 'server', S, 'Events the server dropped (events.dropped_events).'),
  family('flussonic_server_partition_size_bytes', 'gauge', 'server', PART, 'Size of a disk partition in bytes (partitions[].total_mb x 1048576).'),
  family('flussonic_server_partition_usage_ratio', 'gauge', 'server', PART, 'Used share of a disk partition, 0..1 (partitions[].usage / 100).'),
  family('flussonic_server_partition_io_utilization_ratio', 'gauge', 'server', PART, 'IO utilization of the device behind a partition, 0..1 (partitions[].io_util / 100).'),

  // Transcoder devices / GPUs: transcoder_devices[] of GET /config/stats
  family('flussonic_transcoder_device_info', 'gauge', 'server', ['server', 'device', 'type', 'name', 'uuid'], 'Transcoder device (GPU, CPU, coder) type, name and uuid; value 1.'),
  family('flussonic_transcoder_device_temperature_celsius', 'gauge', 'server', SD, 'GPU temperature in degrees Celsius (gpu_temp).'),
  family('flussonic_transcoder_device_encoder_utilization_ratio', 'gauge', 'server', SD, 'GPU encoder load, 0..1 (gpu_enc / 100).'),
  family('flussonic_transcoder_device_decoder_utilization_ratio', 'gauge', 'server', SD, 'GPU decoder load, 0..1 (gpu_dec / 100).'),
  family('flussonic_transcoder_device_sm_utilization_ratio', 'gauge', 'server', SD, 'GPU streaming multiprocessor load, 0..1 (gpu_sm / 100).'),
  family('flussonic_transcoder_device_memory_total_bytes', 'gauge', 'server', SD, 'Total device memory in bytes (memTotal; the unit is undocumented: values below 1048576 are taken as MiB, larger ones as bytes).'),
  family('flussonic_transcoder_device_memory_free_bytes', 'gauge', 'server', SD, 'Free device memory in bytes (memFree; values below 1048576 are taken as MiB, larger ones as bytes).'),
  family('flussonic_transcoder_device_memory_used_bytes', 'gauge', 'server', SD, 'Used device memory in bytes (memUsed; values below 1048576 are taken as MiB, larger ones as bytes).'),

  // Streams: GET /streams
  family('flussonic_stream_info', 'gauge', 'streams', ['server', 'stream', 'title', 'named_by'], 'Stream title and origin (named_by); value 1.'),
  family('flussonic_stream_alive', 'gauge', 'streams', SS, 'Whether the stream is alive, receiving frames (stats.alive).'),
  family('flussonic_stream_status', 'gauge', 'streams', ['server', 'stream', 'status'], 'Stream status as a state set (stats.status): 1 for the current status, 0 for the others.'),
  family('flussonic_stream_bitrate_bytes_per_second', 'gauge', 'streams', SS, 'Stream bitrate in bytes per second (stats.bitrate x 125).'),
  family('flussonic_stream_input_bitrate_bytes_per_second', 'gauge', 'streams', SS, 'Input bitrate in bytes per second (stats.input_bitrate x 125).'),
  family('flussonic_stream_output_bitrate_bytes_per_second', 'gauge', 'streams', SS, 'Bitrate of the output media in bytes per second (stats.output_bitrate x 125).'),
  family('flussonic_stream_output_bandwidth_bytes_per_second', 'gauge', 'streams', SS, 'Traffic to all clients of the stream in bytes per second (stats.out_bandwidth x 125, else stats.output_bandwidth / 8).'),
  family('flussonic_stream_received_bytes_total', 'counter', 'streams', SS, 'Bytes received from the stream input (stats.bytes_in, else stats.input.bytes).'),
  family('flussonic_stream_sent_bytes_total', 'counter', 'streams', SS, 'Bytes sent to clients of the stream (stats.bytes_out).'),
  family('flussonic_stream_clients', 'gauge', 'streams', SS, 'Clients watching the stream (stats.online_clients, else stats.client_count).'),
  family('flussonic_stream_retries_total', 'counter', 'streams', SS, 'Times the stream retried its input (stats.retry_count).'),
  family('flussonic_stream_input_dropped_packets_per_second', 'gauge', 'streams', SS, 'Input packets dropped per second (stats.input_error_rate, else stats.input.error_rate).'),
  family('flussonic_stream_input_errors_total', 'counter', 'streams', ['server', 'stream', 'error'], 'Input errors by kind (stats.input.errors_<error>, 2025 stats shape).'),
  family('flussonic_stream_input_delay_seconds', 'gauge', 'streams', SS, 'Time without frames from the input, in seconds (stats.ts_delay / 1000).'),
  family('flussonic_stream_last_frame_timestamp_seconds', 'gauge', 'streams', SS, 'Unix time of the last frame received (stats.last_dts_at / 1000).'),
  family('flussonic_stream_start_time_seconds', 'gauge', 'streams', SS, 'Unix time when the stream was opened (stats.opened_at / 1000).'),
  family('flussonic_stream_last_access_timestamp_seconds', 'gauge', 'streams', SS, 'Unix time of the last client access (stats.last_access_at / 1000).'),
  family('flussonic_stream_backup_active', 'gauge', 'streams', SS, 'Whether the stream runs on its backup input (stats.backup_running).'),
  family('flussonic_stream_input_switches_total', 'counter', 'streams', SS, 'Switches between inputs (stats.input.input_switches).'),
  family('flussonic_stream_transcoder_running', 'gauge', 'streams', SS, 'Whether the transcoder of the stream runs (stats.running_transcoder).'),
  family('flussonic_stream_transcoder_overloaded', 'gauge', 'streams', SS, 'Whether the transcoder of the stream is overloaded (stats.transcoder_overloaded).'),
  family('flussonic_stream_transcoder_info', 'gauge', 'streams', ['server', 'stream', 'hw', 'target'], 'Transcoder device kind and target of the stream (stats.transcoder.hw, .target); value 1.'),
  family('flussonic_stream_transcoder_qualities', 'gauge', 'streams', SS, 'Output video tracks of the transcoder (stats.transcoder.qualities).'),
  family('flussonic_stream_transcoder_restarts_total', 'counter', 'streams', SS, 'Transcoder restarts (stats.transcoder.restarts).'),
  family('flussonic_stream_transcoder_ad_markers_total', 'counter', 'streams', ['server', 'stream', 'kind'], 'Advertising markers seen by the transcoder, by kind (stats.transcoder.<kind>).'),
  family('flussonic_stream_transcoder_frames_total', 'counter', 'streams', SS, 'Frames processed by the transcoder (stats.transcoder.frames).'),
  family('flussonic_stream_transcoder_duplicated_frames_total', 'counter', 'streams', ['server', 'stream', 'track'], 'Frames the transcoder duplicated to keep the frame rate (stats.transcoder.tracks[].dup_frames_added).'),
  family('flussonic_stream_transcoder_dropped_frames_total', 'counter', 'streams', ['server', 'stream', 'track'], 'Frames the transcoder dropped over the limit (stats.transcoder.tracks[].overlimit_frames_removed).'),
  family('flussonic_stream_dvr_enabled', 'gauge', 'streams', SS, 'Whether DVR recording is enabled for the stream (stats.dvr_enabled).'),
  family('flussonic_stream_dvr_depth_seconds', 'gauge', 'streams', SS, 'Depth of the DVR archive in seconds (stats.dvr_info.depth).'),
  family('flussonic_stream_dvr_size_bytes', 'gauge', 'streams', SS, 'Size of the DVR archive in bytes (stats.dvr_info.bytes).'),
  family('flussonic_stream_dvr_replication_ratio', 'gauge', 'streams', SS, 'DVR replication progress, 0..1 (stats.dvr_replication / 100).'),
  family('flussonic_stream_dvr_replication_running', 'gauge', 'streams', SS, 'Whether DVR replication runs (stats.dvr_replication_running).'),
  family('flussonic_stream_publish_enabled', 'gauge', 'streams', SS, 'Whether publishing into the stream is enabled (stats.publish_enabled).'),
  family('flussonic_stream_track_info', 'gauge', 'streams', ['server', 'stream', 'track', 'content', 'codec', 'width', 'height', 'language'], 'Media track of the stream (stats.media_info.tracks[]); value 1; absent attributes are empty.'),
  family('flussonic_stream_track_bitrate_bytes_per_second', 'gauge', 'streams', ['server', 'stream', 'track', 'content'], 'Bitrate of a media track in bytes per second (tracks[].bitrate x 125).'),
  family('flussonic_stream_track_frames_per_second', 'gauge', 'streams', ['server', 'stream', 'track'], 'Frame rate of a video track (tracks[].avg_fps, else fps).'),
  family('flussonic_stream_track_gop_frames', 'gauge', 'streams', ['server', 'stream', 'track'], 'GOP length of a video track in frames (tracks[].avg_gop, else last_gop).'),
  family('flussonic_stream_push_sent_bytes_total', 'counter', 'streams', ['server', 'stream', 'push'], 'Bytes sent by a push of the stream; push is its index (pushes[i].stats.bytes or stats.push[i].bytes).'),
  family('flussonic_stream_push_retries_total', 'counter', 'streams', ['server', 'stream', 'push'], 'Retries of a push of the stream; push is its index.'),

  // Streams, per input: inputs[i].stats / stats.inputs[i]; input = the 0-based index of /streams/{name}/inputs/{index}
  family('flussonic_stream_input_active', 'gauge', 'streams', SSI, 'Whether this input is selected as active for the stream (active); input is its 0-based index.'),
  family('flussonic_stream_input_received_bytes_total', 'counter', 'streams', SSI, 'Bytes received by this input instance (bytes); resets when the input reconnects.'),
  family('flussonic_stream_input_last_frame_timestamp_seconds', 'gauge', 'streams', SSI, 'Unix time of the last frame from this input (last_dts_at / 1000).'),
  family('flussonic_stream_input_start_time_seconds', 'gauge', 'streams', SSI, 'Unix time when this input connected (connected_at / 1000, else opened_at: seconds up to 23.x, milliseconds in 2025); changes on every reconnect.'),
  family('flussonic_stream_input_error', 'gauge', 'streams', SSI, '1 when this input reports an error (error), else 0; the error text is not exported.'),

  // Sessions: GET /sessions, aggregated by the configured group_by labels
  family('flussonic_sessions', 'gauge', 'sessions', S, 'Sessions open now, by the configured group_by labels.', { groupByLabels: true }),
  family('flussonic_sessions_opened_total', 'counter', 'sessions', S, 'Session ids seen for the first time. A session that opened and closed between two polls is not seen.', { groupByLabels: true }),
  family('flussonic_sessions_closed_total', 'counter', 'sessions', S, 'Session ids that disappeared or got closed_at. A session that opened and closed between two polls is not seen.', { groupByLabels: true }),
  family('flussonic_sessions_sent_bytes_total', 'counter', 'sessions', S, 'Bytes sent in sessions: the sum of every seen session\'s bytes growth; monotonic while sessions close. Bytes of a session that opened and closed between two polls are not seen.', { groupByLabels: true }),
  family('flussonic_session_duration_seconds', 'histogram', 'sessions', ['server', 'proto'], 'Lifetime of closed sessions in seconds (closed_at or last seen, minus opened_at).'),

  // DVR storages: GET /dvrs
  family('flussonic_dvr_storage_size_bytes', 'gauge', 'dvrs', ['server', 'dvr'], 'Size of a DVR storage in bytes (stats.size; without DVR-level stats, the sum of disks[].stats.size).'),
  family('flussonic_dvr_storage_used_bytes', 'gauge', 'dvrs', ['server', 'dvr'], 'Used space of a DVR storage in bytes (stats.used; without it, size x usage / 100 of the storage or of each disk).'),
  family('flussonic_dvr_storage_errors_total', 'counter', 'dvrs', ['server', 'dvr', 'error'], 'Errors of a DVR storage by kind (stats.errors.<error>; without DVR-level stats, summed over disks[].stats.errors).'),

  // Cluster view: GET /cluster/peers (cluster collector, opt-in)
  family('flussonic_cluster_peers', 'gauge', 'cluster', S, 'Peers listed by this server (GET /cluster/peers).'),
  family('flussonic_cluster_peer_up', 'gauge', 'cluster', PEER, '1 when the server has fresh stats of the peer without an error (stats present, error empty, now within stale_timeout), else 0.'),
  family('flussonic_cluster_peer_cpu_usage_ratio', 'gauge', 'cluster', PEER, 'CPU usage of the peer, 0..1 (stats.cpu_usage / 100).'),
  family('flussonic_cluster_peer_memory_usage_ratio', 'gauge', 'cluster', PEER, 'Memory usage of the peer, 0..1 (stats.memory_usage / 100).'),
  family('flussonic_cluster_peer_bandwidth_usage_ratio', 'gauge', 'cluster', PEER, 'Bandwidth usage of the peer, 0..1 (stats.bandwidth_usage / 100).'),
  family('flussonic_cluster_peer_clients', 'gauge', 'cluster', PEER, 'Clients of the peer (stats.total_clients, else client_count).'),
  family('flussonic_cluster_peer_streams', 'gauge', 'cluster', PEER, 'Streams of the peer (stats.total_streams, else stream_count).'),
  family('flussonic_cluster_peer_online_streams', 'gauge', 'cluster', PEER, 'Online streams of the peer (stats.online_streams).'),
  family('flussonic_cluster_peer_input_bytes_per_second', 'gauge', 'cluster', PEER, 'Incoming traffic of the peer in bytes per second (stats.input_kbit x 125).'),
  family('flussonic_cluster_peer_output_bytes_per_second', 'gauge', 'cluster', PEER, 'Outgoing traffic of the peer in bytes per second (stats.output_kbit x 125, else output_bitrate x 125).'),

  // Subscriber operations log: Catena GET /tv-management/api/v1/operations
  family('flussonic_catena_up', 'gauge', 'operations', ['catena'], '1 when the last poll of the operations log succeeded, else 0.'),
  family('flussonic_catena_operations_total', 'counter', 'operations', ['catena', 'portal', 'operation'], 'Operations observed in the operations log, by type (known types are exported from 0).'),
  family('flussonic_catena_subscriptions_created_total', 'counter', 'operations', ['catena', 'portal', 'package'], 'Subscriptions created (createPackageSubscriber operations).'),
  family('flussonic_catena_subscriptions_cancelled_total', 'counter', 'operations', ['catena', 'portal', 'package'], 'Subscriptions cancelled (deletePackageSubscriber operations).'),
  family('flussonic_catena_billed_seconds_total', 'counter', 'operations', ['catena', 'portal', 'package'], 'Billed subscription time in seconds: for each cancellation, its time minus the time of the matching creation.'),
  family('flussonic_catena_billed_amount_total', 'counter', 'operations', ['catena', 'portal', 'package', 'currency'], 'Billed amount: billed seconds x the configured package price (only packages with a price).'),
  family('flussonic_catena_unmatched_cancellations_total', 'counter', 'operations', ['catena', 'portal'], 'Cancellations whose creation record was not found in the operations log.'),
  family('flussonic_catena_records_rejected_total', 'counter', 'operations', ['catena', 'reason'], 'Operation records not counted, by reason: future (createdAt more than max_clock_skew ahead of the exporter\'s clock).'),
  family('flussonic_catena_last_operation_timestamp_seconds', 'gauge', 'operations', ['catena', 'portal'], 'Unix time (createdAt) of the newest operation seen.'),
  family('flussonic_catena_package_info', 'gauge', 'operations', ['catena', 'portal', 'package', 'name'], 'Package name (payload.packageName); value 1.'),
]);

const BY_NAME: ReadonlyMap<string, FamilyDef> = new Map(CATALOGUE.map((f) => [f.name, f]));

/** The family of that name; throws for a name not in the catalogue (a programming error). */
export function familyByName(name: string): FamilyDef {
  const def = BY_NAME.get(name);
  if (!def) throw new Error(`metric family ${name} is not in the catalogue`);
  return def;
}

export function familiesOf(owner: FamilyOwner): FamilyDef[] {
  return CATALOGUE.filter((f) => f.owner === owner);
}
