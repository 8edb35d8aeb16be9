/**
 * The streams collector's families and how one item of GET /streams becomes their samples, top to
 * bottom: the fields asked for (STREAM_FIELDS), the families with the fields each reads, their
 * tiers and shedding order (STREAM_FAMILIES; `select` is derived from them), then one small pure
 * function per group of families (state, traffic, input, transcoder, DVR, tracks, pushes; the
 * per-input ones in stream-inputs-map.ts). Item in, samples out through the SeriesWriter; no I/O.
 * The flat (23.x/24.x) and nested (2025) stats shapes are both read here; where both carry a value,
 * the field the family's HELP names first wins (design/metrics.md "Streams").
 */
import { streamFilterPasses } from '../lib/name-pattern.js';
import type { ServerConfig, StreamFamilySwitches } from '../config/types.js';
import type { JsonObject } from '../flussonic/api.js';
import type { DvrInfo, FlatPush, MediaInfo, MediaTrack, PushCounters, StreamInputStats, StreamItem, StreamStats, TranscoderStats, TranscoderTrackStats } from '../flussonic/types.js';
import { byDefault, core, defineFamilies, familyList, optional, type FamilyDecl, type StatsShape } from '../families/define.js';
import { BOOLEAN } from '../families/ranges.js';
import type { StreamFamilyGroup } from '../config/switches.js';
import type { SeriesWriter } from '../render/series.js';
import {
  addFlag,
  addNumber,
  addStateSet,
  arrayField,
  bitsToBytes,
  kbitPerSecondToBytes,
  labelText,
  msToSeconds,
  objectField,
  percentToRatio,
  prefer,
} from './fields.js';
import { mapStreamInputs } from './stream-inputs-map.js';

// ---------------------------------------------------------------------------------------------
// What we ask for
// ---------------------------------------------------------------------------------------------

/**
 * Every field of a stream item the families below read, in the order `select` names them. Scalars
 * of `stats` are selected one by one. Nested objects that may be null or absent (`stats.input`,
 * `stats.transcoder`, `stats.dvr_info`) are selected whole: the API description does not say what
 * `select=a.b.c` does where `a.b` is null or an array, and Flussonic's own implementation
 * (openapi_handler, openapi_collection:selector) fails on such a value, which would fail the whole
 * page. The 2021 sample has `media_info: null`.
 *
 * `inputs` (stream-inputs-map.ts) is an array, so selected whole; it also brings the input
 * configuration (URLs, headers), of which only `stats` is read. inputs[i].stats is where 23.x/24.x
 * and the 2025 example put it. `stats.inputs` is not asked for: no current payload we have needs
 * it, and where a server sends both it would double the bytes of every input (npm run bench,
 * nested 1k streams: 2.9 MB -> 3.8 MB per page).
 */
const STREAM_FIELDS = [
  'stats.alive', 'stats.status', 'stats.bitrate', 'stats.out_bandwidth', 'stats.output_bandwidth', 'stats.bytes_in',
  'stats.bytes_out', 'stats.online_clients', 'stats.client_count', 'stats.retry_count', 'stats.input_error_rate',
  'stats.ts_delay', 'stats.opened_at', 'stats.last_access_at', 'stats.backup_running', 'stats.running_transcoder',
  'stats.transcoder_overloaded', 'stats.input', 'inputs',
  'title', 'named_by', 'stats.input_bitrate', 'stats.output_bitrate', 'stats.last_dts_at', 'stats.publish_enabled',
  'stats.playback_duration',
  'stats.transcoder',
  'stats.dvr_enabled', 'stats.dvr_info', 'stats.dvr_replication', 'stats.dvr_replication_running',
  'stats.media_info',
  'stats.push', 'pushes',
] as const;
type StreamField = (typeof STREAM_FIELDS)[number];

/**
 * A stream's `stats` as the mapping reads it: the nested shapes of src/flussonic/types.ts, and
 * every scalar STREAM_FIELDS names (`stats.<field>`), as `unknown` until fields.ts checks it.
 */
type Stats = Readonly<StreamStats> & { readonly [K in StreamField as K extends `stats.${infer Field}` ? Field : never]?: unknown };

// ---------------------------------------------------------------------------------------------
// The families we fill
// ---------------------------------------------------------------------------------------------

/** Series per stream kept for flussonic_stream_input_active (2 inputs) within the default budget. */
export const INPUT_ACTIVE_RESERVED = 2;
/** The most series one stream makes from the stream families at default settings. */
export const STREAM_SERIES_BUDGET = 20;

export const STREAM_STATUSES = ['running', 'waiting', 'error'] as const;
export const TRANSCODER_AD_MARKER_KINDS = ['input_ad_announces', 'output_ad_announces', 'output_shifted_ad_announces', 'input_ad_immediate', 'output_ad_immediate'] as const;

const SS = ['server', 'stream'] as const;
/** Reported only by Flussonic 2025 and later (the nested stats shape), or only by 23.x/24.x (flat). */
const NESTED: readonly StatsShape[] = ['nested'];
const FLAT: readonly StatsShape[] = ['flat'];
const SSI = ['server', 'stream', 'input'] as const;
const SST = ['server', 'stream', 'track'] as const;

/**
 * The flussonic_stream_* families, in exposition order. `perUnit` is series per stream; `reads`
 * the fields of STREAM_FIELDS each needs (a field is selected when a family that is on reads it).
 * The per-input families (input = the 0-based index of /streams/{name}/inputs/{index}) are
 * mapped by stream-inputs-map.ts.
 */
export const STREAM_FAMILIES = defineFamilies(
  'streams',
  {
  info: { name: 'flussonic_stream_info', type: 'gauge', labels: ['server', 'stream', 'title', 'named_by'], tier: optional('details', 1), reads: ['title', 'named_by'],
    help: 'Stream title and origin (named_by); value 1.' },
  alive: { name: 'flussonic_stream_alive', type: 'gauge', labels: SS, tier: core(1), range: BOOLEAN, reads: ['stats.alive'],
    help: 'Whether the stream is alive, receiving frames (stats.alive).' },
  status: { name: 'flussonic_stream_status', type: 'gauge', labels: ['server', 'stream', 'status'], tier: core(3), range: BOOLEAN, reads: ['stats.status'],
    help: 'Stream status as a state set (stats.status): 1 for the current status, 0 for the others.' },
  bitrate: { name: 'flussonic_stream_bitrate_bytes_per_second', type: 'gauge', labels: SS, tier: core(1), reads: ['stats.bitrate'],
    help: 'Stream bitrate in bytes per second (stats.bitrate x 125).' },
  inputBitrate: { name: 'flussonic_stream_input_bitrate_bytes_per_second', type: 'gauge', labels: SS, tier: optional('details', 1), reads: ['stats.input_bitrate'],
    help: 'Input bitrate in bytes per second (stats.input_bitrate x 125).' },
  outputBitrate: { name: 'flussonic_stream_output_bitrate_bytes_per_second', type: 'gauge', labels: SS, tier: optional('details', 1), reads: ['stats.output_bitrate'], shapes: FLAT,
    help: 'Bitrate of the output media in bytes per second (stats.output_bitrate x 125).' },
  outputBandwidth: { name: 'flussonic_stream_output_bandwidth_bytes_per_second', type: 'gauge', labels: SS, tier: byDefault(1), reads: ['stats.out_bandwidth', 'stats.output_bandwidth'],
    help: 'Traffic to all clients of the stream in bytes per second (stats.out_bandwidth x 125, else stats.output_bandwidth / 8).' },
  received: { name: 'flussonic_stream_received_bytes_total', type: 'counter', labels: SS, tier: core(1), reads: ['stats.bytes_in', 'stats.input'],
    help: 'Bytes received by the stream from its inputs, all together (stats.bytes_in, else stats.input.bytes).' },
  sent: { name: 'flussonic_stream_sent_bytes_total', type: 'counter', labels: SS, tier: core(1), reads: ['stats.bytes_out'],
    help: 'Bytes sent to clients of the stream (stats.bytes_out).' },
  clients: { name: 'flussonic_stream_clients', type: 'gauge', labels: SS, tier: core(1), reads: ['stats.online_clients', 'stats.client_count'],
    help: 'Clients watching the stream (stats.online_clients, else stats.client_count).' },
  playback: { name: 'flussonic_stream_playback_seconds_total', type: 'counter', labels: SS, tier: optional('details', 1), reads: ['stats.playback_duration'],
    help: 'Seconds of the stream watched by all its viewers together since it opened (stats.playback_duration); resets when the stream reopens.' },
  retries: { name: 'flussonic_stream_retries_total', type: 'counter', labels: SS, tier: byDefault(1), reads: ['stats.retry_count'], shapes: FLAT,
    help: 'Times the stream retried its input (stats.retry_count).' },
  droppedPackets: { name: 'flussonic_stream_input_dropped_packets_per_second', type: 'gauge', labels: SS, tier: byDefault(1), reads: ['stats.input_error_rate', 'stats.input'],
    help: 'Input packets dropped per second (stats.input_error_rate, else stats.input.error_rate).' },
  inputErrors: { name: 'flussonic_stream_input_errors_total', type: 'counter', labels: ['server', 'stream', 'error'], tier: optional('input_errors', 10), reads: ['stats.input'], shapes: NESTED,
    help: 'Input errors by kind, of all the stream\'s inputs together (stats.input.errors_<error>, 2025 stats shape).' },
  inputDelay: { name: 'flussonic_stream_input_delay_seconds', type: 'gauge', labels: SS, tier: byDefault(1), reads: ['stats.ts_delay'],
    help: 'Time without frames from the input, in seconds (stats.ts_delay / 1000).' },
  lastFrame: { name: 'flussonic_stream_last_frame_timestamp_seconds', type: 'gauge', labels: SS, tier: optional('details', 1), reads: ['stats.last_dts_at'],
    help: 'Unix time of the last frame received (stats.last_dts_at / 1000).' },
  startTime: { name: 'flussonic_stream_start_time_seconds', type: 'gauge', labels: SS, tier: byDefault(1), reads: ['stats.opened_at'],
    help: 'Unix time when the stream was opened (stats.opened_at / 1000).' },
  lastAccess: { name: 'flussonic_stream_last_access_timestamp_seconds', type: 'gauge', labels: SS, tier: byDefault(1), reads: ['stats.last_access_at'],
    help: 'Unix time of the last client access (stats.last_access_at / 1000).' },
  backupActive: { name: 'flussonic_stream_backup_active', type: 'gauge', labels: SS, tier: byDefault(1), range: BOOLEAN, reads: ['stats.backup_running'],
    help: 'Whether the stream runs on its backup input (stats.backup_running).' },
  inputSwitches: { name: 'flussonic_stream_input_switches_total', type: 'counter', labels: SS, tier: byDefault(1), reads: ['stats.input'], shapes: NESTED,
    help: 'Switches between inputs (stats.input.input_switches).' },
  transcoderRunning: { name: 'flussonic_stream_transcoder_running', type: 'gauge', labels: SS, tier: byDefault(1), range: BOOLEAN, reads: ['stats.running_transcoder'],
    help: 'Whether the transcoder of the stream runs (stats.running_transcoder).' },
  transcoderOverloaded: { name: 'flussonic_stream_transcoder_overloaded', type: 'gauge', labels: SS, tier: byDefault(1), range: BOOLEAN, reads: ['stats.transcoder_overloaded'],
    help: 'Whether the transcoder of the stream is overloaded (stats.transcoder_overloaded).' },
  transcoderInfo: { name: 'flussonic_stream_transcoder_info', type: 'gauge', labels: ['server', 'stream', 'hw', 'target'], tier: optional('transcoder', 1), reads: ['stats.transcoder'], shapes: NESTED,
    help: 'Transcoder device kind and target of the stream (stats.transcoder.hw, .target); value 1.' },
  transcoderQualities: { name: 'flussonic_stream_transcoder_qualities', type: 'gauge', labels: SS, tier: optional('transcoder', 1), reads: ['stats.transcoder'], shapes: NESTED,
    help: 'Output video tracks of the transcoder (stats.transcoder.qualities).' },
  transcoderRestarts: { name: 'flussonic_stream_transcoder_restarts_total', type: 'counter', labels: SS, tier: optional('transcoder', 1), reads: ['stats.transcoder'], shapes: NESTED,
    help: 'Transcoder restarts (stats.transcoder.restarts).' },
  transcoderAdMarkers: { name: 'flussonic_stream_transcoder_ad_markers_total', type: 'counter', labels: ['server', 'stream', 'kind'], tier: optional('transcoder', 5), reads: ['stats.transcoder'], shapes: NESTED,
    help: 'Advertising markers seen by the transcoder, by kind (stats.transcoder.<kind>).' },
  transcoderFrames: { name: 'flussonic_stream_transcoder_frames_total', type: 'counter', labels: SS, tier: optional('transcoder', 1), reads: ['stats.transcoder'], shapes: NESTED,
    help: 'Frames processed by the transcoder (stats.transcoder.frames).' },
  transcoderDuplicated: { name: 'flussonic_stream_transcoder_duplicated_frames_total', type: 'counter', labels: SST, tier: optional('transcoder_tracks', 3), reads: ['stats.transcoder'], shapes: NESTED,
    help: 'Frames the transcoder duplicated to keep the frame rate (stats.transcoder.tracks[].dup_frames_added).' },
  transcoderDropped: { name: 'flussonic_stream_transcoder_dropped_frames_total', type: 'counter', labels: SST, tier: optional('transcoder_tracks', 3), reads: ['stats.transcoder'], shapes: NESTED,
    help: 'Frames the transcoder dropped over the limit (stats.transcoder.tracks[].overlimit_frames_removed).' },
  dvrEnabled: { name: 'flussonic_stream_dvr_enabled', type: 'gauge', labels: SS, tier: optional('dvr', 1), range: BOOLEAN, reads: ['stats.dvr_enabled'],
    help: 'Whether DVR recording is enabled for the stream (stats.dvr_enabled).' },
  dvrDepth: { name: 'flussonic_stream_dvr_depth_seconds', type: 'gauge', labels: SS, tier: optional('dvr', 1), reads: ['stats.dvr_info'],
    help: 'Depth of the DVR archive in seconds (stats.dvr_info.depth).' },
  dvrSize: { name: 'flussonic_stream_dvr_size_bytes', type: 'gauge', labels: SS, tier: optional('dvr', 1), reads: ['stats.dvr_info'],
    help: 'Size of the DVR archive in bytes (stats.dvr_info.bytes).' },
  dvrReplication: { name: 'flussonic_stream_dvr_replication_ratio', type: 'gauge', labels: SS, tier: optional('dvr', 1), reads: ['stats.dvr_replication'],
    help: 'DVR replication progress, 0..1 (stats.dvr_replication / 100).' },
  dvrReplicationRunning: { name: 'flussonic_stream_dvr_replication_running', type: 'gauge', labels: SS, tier: optional('dvr', 1), range: BOOLEAN, reads: ['stats.dvr_replication_running'],
    help: 'Whether DVR replication runs (stats.dvr_replication_running).' },
  publishEnabled: { name: 'flussonic_stream_publish_enabled', type: 'gauge', labels: SS, tier: optional('details', 1), range: BOOLEAN, reads: ['stats.publish_enabled'],
    help: 'Whether publishing into the stream is enabled (stats.publish_enabled).' },
  trackInfo: { name: 'flussonic_stream_track_info', type: 'gauge', labels: ['server', 'stream', 'track', 'content', 'codec', 'width', 'height', 'language'], tier: optional('tracks', 5), reads: ['stats.media_info'],
    help: 'Media track of the stream (stats.media_info.tracks[]); value 1; absent attributes are empty.' },
  trackBitrate: { name: 'flussonic_stream_track_bitrate_bytes_per_second', type: 'gauge', labels: ['server', 'stream', 'track', 'content'], tier: optional('tracks', 5), reads: ['stats.media_info'],
    help: 'Bitrate of a media track in bytes per second (tracks[].bitrate x 125).' },
  trackFps: { name: 'flussonic_stream_track_frames_per_second', type: 'gauge', labels: SST, tier: optional('tracks', 3), reads: ['stats.media_info'],
    help: 'Frame rate of a video track (tracks[].avg_fps, else fps).' },
  trackGop: { name: 'flussonic_stream_track_gop_frames', type: 'gauge', labels: SST, tier: optional('tracks', 3), reads: ['stats.media_info'],
    help: 'GOP length of a video track in frames (tracks[].avg_gop, else last_gop).' },
  pushSent: { name: 'flussonic_stream_push_sent_bytes_total', type: 'counter', labels: ['server', 'stream', 'push'], tier: optional('pushes', 2), reads: ['stats.push', 'pushes'],
    help: 'Bytes sent by a push of the stream; push is its index (pushes[i].stats.bytes or stats.push[i].bytes).' },
  pushRetries: { name: 'flussonic_stream_push_retries_total', type: 'counter', labels: ['server', 'stream', 'push'], tier: optional('pushes', 2), reads: ['stats.push', 'pushes'],
    help: 'Retries of a push of the stream; push is its index.' },
  inputActive: { name: 'flussonic_stream_input_active', type: 'gauge', labels: SSI, tier: byDefault(INPUT_ACTIVE_RESERVED), reads: ['inputs'],
    help: 'Whether this input is selected as active for the stream (active); input is its 0-based index.' },
  inputReceived: { name: 'flussonic_stream_input_received_bytes_total', type: 'counter', labels: SSI, tier: optional('inputs', INPUT_ACTIVE_RESERVED), reads: ['inputs'],
    help: 'Bytes received by this input instance (bytes); resets when the input reconnects.' },
  inputLastFrame: { name: 'flussonic_stream_input_last_frame_timestamp_seconds', type: 'gauge', labels: SSI, tier: optional('inputs', INPUT_ACTIVE_RESERVED), reads: ['inputs'],
    help: 'Unix time of the last frame from this input (last_dts_at / 1000).' },
  inputStartTime: { name: 'flussonic_stream_input_start_time_seconds', type: 'gauge', labels: SSI, tier: optional('inputs', INPUT_ACTIVE_RESERVED), reads: ['inputs'],
    help: 'Unix time when this input connected (connected_at / 1000, else opened_at: seconds up to 23.x, milliseconds in 2025); changes on every reconnect.' },
  inputError: { name: 'flussonic_stream_input_error', type: 'gauge', labels: SSI, tier: optional('inputs', INPUT_ACTIVE_RESERVED), reads: ['inputs'],
    help: '1 when this input reports an error (error), else 0; the error text is not exported.' },
  } satisfies Record<string, FamilyDecl & { reads: readonly StreamField[] }>,
  // Shedding order, first shed first: optional groups (heaviest and least used first), then the
  // default families, those the alert rules use last. Restarts: retries on 23.x/24.x; start time
  // changes and input switches on 2025 servers.
  [
    'trackInfo', 'trackBitrate', 'trackFps', 'trackGop', 'transcoderDuplicated', 'transcoderDropped', 'pushSent',
    'pushRetries', 'inputErrors', 'inputReceived', 'inputLastFrame', 'inputStartTime', 'inputError', 'info',
    'lastFrame', 'publishEnabled', 'outputBitrate', 'inputBitrate', 'playback', 'transcoderAdMarkers', 'transcoderInfo',
    'transcoderQualities', 'transcoderRestarts', 'transcoderFrames', 'dvrReplication', 'dvrReplicationRunning',
    'dvrEnabled', 'dvrDepth', 'dvrSize', 'outputBandwidth', 'transcoderRunning', 'inputDelay', 'droppedPackets',
    'inputActive', 'retries', 'startTime', 'inputSwitches', 'backupActive', 'transcoderOverloaded', 'lastAccess',
  ],
);
const F = STREAM_FAMILIES;

/** The `select` of the walk for the given family switches: the walk key, then what the families that are on read. */
export function streamsSelect(families: StreamFamilySwitches): string[] {
  const wanted = new Set<string>();
  for (const def of familyList(STREAM_FAMILIES)) {
    if (def.switch === undefined || families[def.switch.slice('families.'.length) as StreamFamilyGroup]) for (const field of def.reads) wanted.add(field);
  }
  return ['name', ...STREAM_FIELDS.filter((field) => wanted.has(field))];
}

/** Prefix of the input error counters in `stats.input` (2025 shape). */
const INPUT_ERRORS_PREFIX = 'errors_';

// ---------------------------------------------------------------------------------------------
// How each group maps (pure: item in, samples out)
// ---------------------------------------------------------------------------------------------

/**
 * Maps one item of GET /streams. An item without a string `name` is a shape problem (it cannot be
 * labelled); an item the filter excludes adds nothing.
 */
/** Returns the name of the stream exported, undefined when it is not (no name, filtered out). */
export function mapStream(out: SeriesWriter, item: JsonObject, config: Pick<ServerConfig, 'streams' | 'families'>): string | undefined {
  const stream = item as StreamItem;
  if (typeof stream.name !== 'string' || stream.name === '') {
    out.recordProblem(F.info, [], stream.name);
    return undefined;
  }
  const name = stream.name;
  if (!streamFilterPasses(config.streams, name)) return undefined; // RE2 rules: linear in the name's length

  const { families } = config;
  if (families.details) out.add(F.info, [name, labelText(stream.title), labelText(stream.named_by)], 1);
  const stats = objectField<Stats>(out, F.alive, [name], stream.stats);
  if (!stats) return name;
  const input = objectField<StreamInputStats>(out, F.inputSwitches, [name], stats.input);
  mapState(out, name, stats, families);
  mapTraffic(out, name, stats, input, families);
  mapInput(out, name, stats, input, families);
  mapStreamInputs(out, F, name, stream.inputs, stats.inputs, families);
  mapTranscoder(out, name, stats, families);
  if (families.dvr) mapDvr(out, name, stats);
  if (families.tracks) mapTracks(out, name, stats);
  if (families.pushes) mapPushes(out, name, stats, stream.pushes);
  return name;
}

function mapState(out: SeriesWriter, name: string, stats: Stats, families: StreamFamilySwitches): void {
  const labels = [name];
  addFlag(out, F.alive, labels, stats.alive);
  addStateSet(out, F.status, labels, STREAM_STATUSES, stats.status);
  addNumber(out, F.lastAccess, labels, stats.last_access_at, msToSeconds);
  // Default: a change of the start time is how a 2025 server shows a restart (no retry_count there).
  addNumber(out, F.startTime, labels, stats.opened_at, msToSeconds);
  if (families.details) addFlag(out, F.publishEnabled, labels, stats.publish_enabled);
}

/** The parts of a stream's mapping that read `stats.input` (its inputs' stats, aggregated) besides its own. */
type WithInput = (out: SeriesWriter, name: string, stats: Stats, input: Readonly<StreamInputStats> | undefined, families: StreamFamilySwitches) => void;

const mapTraffic: WithInput = (out, name, stats, input, families) => {
  const labels = [name];
  addNumber(out, F.bitrate, labels, stats.bitrate, kbitPerSecondToBytes);
  if (families.details) {
    addNumber(out, F.inputBitrate, labels, stats.input_bitrate, kbitPerSecondToBytes);
    addNumber(out, F.outputBitrate, labels, stats.output_bitrate, kbitPerSecondToBytes);
    addNumber(out, F.playback, labels, stats.playback_duration);
  }
  // Traffic to all clients: kbit/s in the flat field, bits/s in `output_bandwidth`.
  if (stats.out_bandwidth !== undefined && stats.out_bandwidth !== null) {
    addNumber(out, F.outputBandwidth, labels, stats.out_bandwidth, kbitPerSecondToBytes);
  } else {
    addNumber(out, F.outputBandwidth, labels, stats.output_bandwidth, bitsToBytes);
  }
  addNumber(out, F.received, labels, prefer(stats.bytes_in, input?.bytes));
  addNumber(out, F.sent, labels, stats.bytes_out);
  addNumber(out, F.clients, labels, prefer(stats.online_clients, stats.client_count));
};

const mapInput: WithInput = (out, name, stats, input, families) => {
  const labels = [name];
  addNumber(out, F.retries, labels, stats.retry_count);
  addNumber(out, F.droppedPackets, labels, prefer(stats.input_error_rate, input?.error_rate));
  addNumber(out, F.inputDelay, labels, stats.ts_delay, msToSeconds);
  addFlag(out, F.backupActive, labels, stats.backup_running);
  // Default: failovers between inputs, the other restart signal of a 2025 server.
  addNumber(out, F.inputSwitches, labels, input?.input_switches);
  if (families.details) addNumber(out, F.lastFrame, labels, stats.last_dts_at, msToSeconds);
  if (input && families.input_errors) {
    for (const [field, value] of Object.entries(input)) {
      if (field.startsWith(INPUT_ERRORS_PREFIX) && field.length > INPUT_ERRORS_PREFIX.length) {
        addNumber(out, F.inputErrors, [name, field.slice(INPUT_ERRORS_PREFIX.length)], value);
      }
    }
  }
};

function mapTranscoder(out: SeriesWriter, name: string, stats: Stats, families: StreamFamilySwitches): void {
  const labels = [name];
  addFlag(out, F.transcoderRunning, labels, stats.running_transcoder);
  addFlag(out, F.transcoderOverloaded, labels, stats.transcoder_overloaded);
  if (!families.transcoder && !families.transcoder_tracks) return;
  const tc = objectField<TranscoderStats>(out, F.transcoderInfo, labels, stats.transcoder);
  if (!tc) return;
  if (families.transcoder) {
    out.add(F.transcoderInfo, [name, labelText(tc.hw), labelText(tc.target)], 1);
    addNumber(out, F.transcoderQualities, labels, tc.qualities);
    addNumber(out, F.transcoderRestarts, labels, tc.restarts);
    for (const kind of TRANSCODER_AD_MARKER_KINDS) addNumber(out, F.transcoderAdMarkers, [name, kind], tc[kind]);
    addNumber(out, F.transcoderFrames, labels, tc.frames);
  }
  if (!families.transcoder_tracks) return;
  const seen = new Set<string>();
  for (const [i, raw] of arrayField(out, F.transcoderDuplicated, labels, tc.tracks).entries()) {
    const track = objectField<TranscoderTrackStats>(out, F.transcoderDuplicated, labels, raw);
    if (!track) continue;
    const id = trackLabel(track.track_id, i);
    if (seen.has(id)) continue; // a repeated track id would be a duplicate series
    seen.add(id);
    addNumber(out, F.transcoderDuplicated, [name, id], track.dup_frames_added);
    addNumber(out, F.transcoderDropped, [name, id], track.overlimit_frames_removed);
  }
}

function mapDvr(out: SeriesWriter, name: string, stats: Stats): void {
  const labels = [name];
  addFlag(out, F.dvrEnabled, labels, stats.dvr_enabled);
  const dvr = objectField<DvrInfo>(out, F.dvrDepth, labels, stats.dvr_info);
  addNumber(out, F.dvrDepth, labels, dvr?.depth);
  addNumber(out, F.dvrSize, labels, dvr?.bytes);
  addNumber(out, F.dvrReplication, labels, stats.dvr_replication, percentToRatio);
  addFlag(out, F.dvrReplicationRunning, labels, stats.dvr_replication_running);
}

function mapTracks(out: SeriesWriter, name: string, stats: Stats): void {
  const mediaInfo = objectField<MediaInfo>(out, F.trackInfo, [name], stats.media_info);
  const tracks = arrayField(out, F.trackInfo, [name], mediaInfo?.tracks);
  const seen = new Set<string>();
  for (const [i, raw] of tracks.entries()) {
    const track = objectField<MediaTrack>(out, F.trackInfo, [name], raw);
    if (!track) continue;
    const id = trackLabel(track.track_id, i);
    if (seen.has(id)) continue;
    seen.add(id);
    const content = labelText(track.content);
    out.add(
      F.trackInfo,
      [name, id, content, labelText(track.codec), labelText(track.width), labelText(track.height), labelText(track.language)],
      1,
    );
    addNumber(out, F.trackBitrate, [name, id, content], track.bitrate, kbitPerSecondToBytes);
    addNumber(out, F.trackFps, [name, id], prefer(track.avg_fps, track.fps));
    addNumber(out, F.trackGop, [name, id], prefer(track.avg_gop, track.last_gop));
  }
}

/**
 * Push counters by index: `stats.push[i]` (2025) field by field before `pushes[i].stats` (flat).
 * The index is the label because a push has no other identity that is not its URL.
 */
function mapPushes(out: SeriesWriter, name: string, stats: Stats, pushes: unknown): void {
  const nested = arrayField(out, F.pushSent, [name], stats.push);
  const flat = arrayField(out, F.pushSent, [name], pushes);
  const count = Math.max(nested.length, flat.length);
  for (let i = 0; i < count; i++) {
    const labels = [name, String(i)];
    const newer = objectField<PushCounters>(out, F.pushSent, labels, nested[i]);
    const flatPush = objectField<FlatPush>(out, F.pushSent, labels, flat[i]);
    const older = objectField<PushCounters>(out, F.pushSent, labels, flatPush?.stats);
    addNumber(out, F.pushSent, labels, prefer(newer?.bytes, older?.bytes));
    addNumber(out, F.pushRetries, labels, prefer(newer?.retries, older?.retries));
  }
}

/** A track's label: its `track_id`, or its position where the id is missing. */
function trackLabel(trackId: unknown, index: number): string {
  return labelText(trackId) || String(index);
}

