/**
 * Collector `streams`: one select-limited cursor walk of GET /streams per poll, each stream mapped
 * to the flussonic_stream_* families (design/metrics.md "Streams") by the pure functions of
 * streams-map.ts, which also declares the families and the fields they read. This file says how
 * the poll runs.
 *
 * Both stats shapes are read: the flat one of 23.x/24.x and the nested one of 2025. Where both
 * carry a value the family's HELP names first wins (the newer one, except for `bytes_in` and
 * `out_bandwidth`, named first). The stream filter (`streams.include`,
 * `streams.exclude`) and the family switches of the server's config (`families.*`, see
 * src/config/switches.ts) apply here; a field only switched-off families read is left out of
 * `select`, so the server does not send it.
 */
import { STREAM_FAMILY_GROUPS, type StreamFamilyGroup } from '../config/switches.js';
import { LabelBlockCache } from '../render/label-blocks.js';
import { mapStream, streamsSelect } from './streams-map.js';
import type { Collector, CollectContext } from './types.js';

export { streamsSelect };

const DEFAULT_SWITCHES = Object.fromEntries(STREAM_FAMILY_GROUPS.map((g) => [g, false])) as Record<StreamFamilyGroup, boolean>;

/** The `select` at default settings (every optional group off). */
export const STREAMS_SELECT: readonly string[] = Object.freeze(streamsSelect(DEFAULT_SWITCHES));

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
    for (const stream of page) {
      const name = mapStream(ctx.out, stream, ctx.config);
      // The event sink's source_lost_total is exported at 0 for each of these (src/events).
      if (name !== undefined && ctx.config.reportStreams === true) ctx.out.noteUnit(name);
    }
  }
  blocks?.sweep(startedAt, ctx.config.staleAfterMs);
}

/** One per server: it keeps the streams' label blocks across polls. */
export function createStreamsCollector(): Collector {
  const blocks = new LabelBlockCache();
  return { collect: (ctx) => collectStreams(ctx, blocks) };
}
