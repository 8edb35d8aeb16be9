/**
 * How one item of GET /streams becomes samples: the families the streams collector fills and one
 * small pure function per group of them (state, traffic, input, transcoder, DVR, tracks, pushes).
 * Item in, samples out through the SeriesWriter; no I/O. The flat (23.x/24.x) and nested (2025)
 * stats shapes are both read here; where both carry a value, the field the catalogue names first
 * wins (design/metrics.md "Streams").
 */
import { streamFilterPasses } from '../lib/name-pattern.js';
import type { ServerConfig, StreamFamilySwitches } from '../config/types.js';
import type { JsonObject } from '../flussonic/api.js';
import type {
  DvrInfo,
  FlatPush,
  MediaInfo,
  MediaTrack,
  PushCounters,
  StreamInputStats,
  StreamItem,
  StreamStats,
  TranscoderStats,
  TranscoderTrackStats,
} from '../flussonic/types.js';
import { familyByName, STREAM_STATUSES, TRANSCODER_AD_MARKER_KINDS } from '../families/catalogue.js';
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
// The families we fill
// ---------------------------------------------------------------------------------------------

const F = {
  info: familyByName('flussonic_stream_info'),
  alive: familyByName('flussonic_stream_alive'),
  status: familyByName('flussonic_stream_status'),
  bitrate: familyByName('flussonic_stream_bitrate_bytes_per_second'),
  inputBitrate: familyByName('flussonic_stream_input_bitrate_bytes_per_second'),
  outputBitrate: familyByName('flussonic_stream_output_bitrate_bytes_per_second'),
  outputBandwidth: familyByName('flussonic_stream_output_bandwidth_bytes_per_second'),
  received: familyByName('flussonic_stream_received_bytes_total'),
  sent: familyByName('flussonic_stream_sent_bytes_total'),
  clients: familyByName('flussonic_stream_clients'),
  retries: familyByName('flussonic_stream_retries_total'),
  droppedPackets: familyByName('flussonic_stream_input_dropped_packets_per_second'),
  inputErrors: familyByName('flussonic_stream_input_errors_total'),
  inputDelay: familyByName('flussonic_stream_input_delay_seconds'),
  lastFrame: familyByName('flussonic_stream_last_frame_timestamp_seconds'),
  startTime: familyByName('flussonic_stream_start_time_seconds'),
  lastAccess: familyByName('flussonic_stream_last_access_timestamp_seconds'),
  backupActive: familyByName('flussonic_stream_backup_active'),
  inputSwitches: familyByName('flussonic_stream_input_switches_total'),
  transcoderRunning: familyByName('flussonic_stream_transcoder_running'),
  transcoderOverloaded: familyByName('flussonic_stream_transcoder_overloaded'),
  transcoderInfo: familyByName('flussonic_stream_transcoder_info'),
  transcoderQualities: familyByName('flussonic_stream_transcoder_qualities'),
  transcoderRestarts: familyByName('flussonic_stream_transcoder_restarts_total'),
  transcoderAdMarkers: familyByName('flussonic_stream_transcoder_ad_markers_total'),
  transcoderFrames: familyByName('flussonic_stream_transcoder_frames_total'),
  transcoderDuplicated: familyByName('flussonic_stream_transcoder_duplicated_frames_total'),
  transcoderDropped: familyByName('flussonic_stream_transcoder_dropped_frames_total'),
  dvrEnabled: familyByName('flussonic_stream_dvr_enabled'),
  dvrDepth: familyByName('flussonic_stream_dvr_depth_seconds'),
  dvrSize: familyByName('flussonic_stream_dvr_size_bytes'),
  dvrReplication: familyByName('flussonic_stream_dvr_replication_ratio'),
  dvrReplicationRunning: familyByName('flussonic_stream_dvr_replication_running'),
  publishEnabled: familyByName('flussonic_stream_publish_enabled'),
  trackInfo: familyByName('flussonic_stream_track_info'),
  trackBitrate: familyByName('flussonic_stream_track_bitrate_bytes_per_second'),
  trackFps: familyByName('flussonic_stream_track_frames_per_second'),
  trackGop: familyByName('flussonic_stream_track_gop_frames'),
  pushSent: familyByName('flussonic_stream_push_sent_bytes_total'),
  pushRetries: familyByName('flussonic_stream_push_retries_total'),
} as const;

/** Prefix of the input error counters in `stats.input` (2025 shape). */
const INPUT_ERRORS_PREFIX = 'errors_';

// ---------------------------------------------------------------------------------------------
// How each group maps (pure: item in, samples out)
// ---------------------------------------------------------------------------------------------

/**
 * Maps one item of GET /streams. An item without a string `name` is a shape problem (it cannot be
 * labelled); an item the filter excludes adds nothing.
 */
export function mapStream(
  out: SeriesWriter,
  item: JsonObject,
  config: Pick<ServerConfig, 'streams' | 'families'>,
): void {
  const stream = item as StreamItem;
  if (typeof stream.name !== 'string' || stream.name === '') {
    out.recordProblem(F.info, [], stream.name);
    return;
  }
  const name = stream.name;
  if (!streamFilterPasses(config.streams, name)) return; // RE2 rules: linear in the name's length

  const { families } = config;
  if (families.details) out.add(F.info, [name, labelText(stream.title), labelText(stream.named_by)], 1);
  const stats = objectField<StreamStats>(out, F.alive, [name], stream.stats);
  if (!stats) return;
  const input = objectField<StreamInputStats>(out, F.inputSwitches, [name], stats.input);
  mapState(out, name, stats, families);
  mapTraffic(out, name, stats, input, families);
  mapInput(out, name, stats, input, families);
  mapStreamInputs(out, name, stream.inputs, stats.inputs, families);
  mapTranscoder(out, name, stats, families);
  if (families.dvr) mapDvr(out, name, stats);
  if (families.tracks) mapTracks(out, name, stats);
  if (families.pushes) mapPushes(out, name, stats, stream.pushes);
}

function mapState(out: SeriesWriter, name: string, stats: Readonly<StreamStats>, families: StreamFamilySwitches): void {
  const labels = [name];
  addFlag(out, F.alive, labels, stats.alive);
  addStateSet(out, F.status, labels, STREAM_STATUSES, stats.status);
  addNumber(out, F.lastAccess, labels, stats.last_access_at, msToSeconds);
  // Default: a change of the start time is how a 2025 server shows a restart (no retry_count there).
  addNumber(out, F.startTime, labels, stats.opened_at, msToSeconds);
  if (families.details) addFlag(out, F.publishEnabled, labels, stats.publish_enabled);
}

function mapTraffic(
  out: SeriesWriter,
  name: string,
  stats: Readonly<StreamStats>,
  input: Readonly<StreamInputStats> | undefined,
  families: StreamFamilySwitches,
): void {
  const labels = [name];
  addNumber(out, F.bitrate, labels, stats.bitrate, kbitPerSecondToBytes);
  if (families.details) {
    addNumber(out, F.inputBitrate, labels, stats.input_bitrate, kbitPerSecondToBytes);
    addNumber(out, F.outputBitrate, labels, stats.output_bitrate, kbitPerSecondToBytes);
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
}

function mapInput(
  out: SeriesWriter,
  name: string,
  stats: Readonly<StreamStats>,
  input: Readonly<StreamInputStats> | undefined,
  families: StreamFamilySwitches,
): void {
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
}

function mapTranscoder(out: SeriesWriter, name: string, stats: Readonly<StreamStats>, families: StreamFamilySwitches): void {
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

function mapDvr(out: SeriesWriter, name: string, stats: Readonly<StreamStats>): void {
  const labels = [name];
  addFlag(out, F.dvrEnabled, labels, stats.dvr_enabled);
  const dvr = objectField<DvrInfo>(out, F.dvrDepth, labels, stats.dvr_info);
  addNumber(out, F.dvrDepth, labels, dvr?.depth);
  addNumber(out, F.dvrSize, labels, dvr?.bytes);
  addNumber(out, F.dvrReplication, labels, stats.dvr_replication, percentToRatio);
  addFlag(out, F.dvrReplicationRunning, labels, stats.dvr_replication_running);
}

function mapTracks(out: SeriesWriter, name: string, stats: Readonly<StreamStats>): void {
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
function mapPushes(out: SeriesWriter, name: string, stats: Readonly<StreamStats>, pushes: unknown): void {
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

