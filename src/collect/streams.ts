/**
 * Collector `streams`: one select-limited cursor walk of GET /streams per poll, each stream mapped
 * to the flussonic_stream_* families of the catalogue (design/metrics.md "Streams") by the pure
 * functions of streams-map.ts. This file says what is asked for and how the poll runs.
 *
 * Both stats shapes are read: the flat one of 23.x/24.x and the nested one of 2025. Where both
 * carry a value the catalogue's first-named field wins (the newer one, except for `bytes_in` and
 * `out_bandwidth`, which the catalogue names first). The stream filter (`streams.include`,
 * `streams.exclude`) and the family switches of the server's config (`families.*`, see
 * src/families/budget.ts) apply here; a switched-off group is also left out of `select` where it
 * has fields of its own, so the server does not send it.
 */
import type { StreamFamilySwitches } from '../config/types.js';
import { LabelBlockCache } from '../render/label-blocks.js';
import { mapStream } from './streams-map.js';
import type { Collector, CollectContext } from './types.js';

// ---------------------------------------------------------------------------------------------
// What we ask for
// ---------------------------------------------------------------------------------------------

/**
 * The fields streams-map.ts maps, always selected. Scalars of `stats` are selected one by one. Nested
 * objects that may be null or absent (`stats.input`, `stats.transcoder`, `stats.dvr_info`) are
 * selected whole: the API description does not say what `select=a.b.c` does where `a.b` is null
 * or an array, and Flussonic's own implementation (openapi_handler, openapi_collection:selector)
 * fails on such a value, which would fail the whole page. The 2021 sample has `media_info: null`.
 */
export const STREAMS_SELECT: readonly string[] = Object.freeze([
  'name',
  'stats.alive',
  'stats.status',
  'stats.bitrate',
  'stats.out_bandwidth',
  'stats.output_bandwidth',
  'stats.bytes_in',
  'stats.bytes_out',
  'stats.online_clients',
  'stats.client_count',
  'stats.retry_count',
  'stats.input_error_rate',
  'stats.ts_delay',
  'stats.opened_at',
  'stats.last_access_at',
  'stats.backup_running',
  'stats.running_transcoder',
  'stats.transcoder_overloaded',
  'stats.input',
  // Per-input runtime (stream-inputs-map.ts): an array, so selected whole (see above); it also
  // brings the input configuration (URLs, headers), of which only `stats` is read. inputs[i].stats
  // is where 23.x/24.x and the 2025 example put it. `stats.inputs` is not asked for: no current
  // payload we have needs it, and where a server sends both it would double the bytes of every
  // input (npm run bench, nested 1k streams: 2.9 MB -> 3.8 MB per page).
  'inputs',
]);
/** Selected only with the `details` switch on. */
export const STREAMS_SELECT_DETAILS: readonly string[] = Object.freeze([
  'title',
  'named_by',
  'stats.input_bitrate',
  'stats.output_bitrate',
  'stats.last_dts_at',
  'stats.publish_enabled',
]);
/** Selected only with the `transcoder` or `transcoder_tracks` switch on. */
export const STREAMS_SELECT_TRANSCODER: readonly string[] = Object.freeze(['stats.transcoder']);
/** Selected only with the `dvr` switch on. */
export const STREAMS_SELECT_DVR: readonly string[] = Object.freeze([
  'stats.dvr_enabled',
  'stats.dvr_info',
  'stats.dvr_replication',
  'stats.dvr_replication_running',
]);
/** Selected only with the `tracks` switch on. */
export const STREAMS_SELECT_TRACKS: readonly string[] = Object.freeze(['stats.media_info']);
/** Selected only with the `pushes` switch on: the nested counters and the flat shape's pushes. */
export const STREAMS_SELECT_PUSHES: readonly string[] = Object.freeze(['stats.push', 'pushes']);

/** The `select` list for the given family switches: a switched-off group is not even sent. */
export function streamsSelect(families: StreamFamilySwitches): string[] {
  return [
    ...STREAMS_SELECT,
    ...(families.details ? STREAMS_SELECT_DETAILS : []),
    ...(families.transcoder || families.transcoder_tracks ? STREAMS_SELECT_TRANSCODER : []),
    ...(families.dvr ? STREAMS_SELECT_DVR : []),
    ...(families.tracks ? STREAMS_SELECT_TRACKS : []),
    ...(families.pushes ? STREAMS_SELECT_PUSHES : []),
  ];
}

// ---------------------------------------------------------------------------------------------
// The poll
// ---------------------------------------------------------------------------------------------

/**
 * Walks GET /streams page by page and maps each stream as it arrives. With a label-block cache
 * (the collector's, kept across polls) each stream's `{server,stream}` block is encoded once in its
 * life; blocks of streams not seen for `stale_after` are freed after the walk.
 */
export async function collectStreams(ctx: CollectContext, blocks?: LabelBlockCache): Promise<void> {
  const select = streamsSelect(ctx.config.families);
  const startedAt = Date.now();
  if (blocks) {
    blocks.begin(ctx.out.constLabels, startedAt);
    ctx.out.useBlockCache(blocks);
  }
  for await (const page of ctx.client.walk('/streams', { select, key: 'name' }, ctx.signal)) {
    // No yields inside a page: scrapes are served by the main thread, and a worker's other
    // targets and messages get their turn at every page boundary (a page maps in ~50 ms).
    for (const stream of page) mapStream(ctx.out, stream, ctx.config);
  }
  blocks?.sweep(startedAt, ctx.config.staleAfterMs);
}

/** One per server: it keeps the streams' label blocks across polls. */
export function createStreamsCollector(): Collector {
  const blocks = new LabelBlockCache();
  return { collect: (ctx) => collectStreams(ctx, blocks) };
}
