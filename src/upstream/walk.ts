/**
 * The cursor walk shared by the upstream clients: ask for the first page with the caller's query
 * (limit, select, filters, sort), then repeat the same query plus `cursor=<next>` until `next` is
 * null or absent. Pages are yielded one by one, so a walk over 100k items never holds more than a
 * page and the set of keys seen.
 *
 * A collection can change during the walk (there is no snapshot), and a broken server can hand
 * out cursors that never end. Guards, each ending the walk with an error of its own kind (reason
 * `cursor_loop`, src/lib/errors.ts) whose message says which one fired:
 *  - a `next` cursor seen before in this walk (repeated cursor);
 *  - a page that adds no new item while `next` is still set (no progress);
 *  - more pages than `maxPages` (page cap).
 * Items whose key was seen on an earlier page are dropped (an item moved by a change during the
 * walk); their number is reported through `onDuplicates`. A caller that keys items itself may turn
 * that off (`dedupe: false`): then the no-progress guard fires on an empty page.
 */
import { upstreamError, type DetailsOf, type UpstreamError, type UpstreamKind } from '../lib/errors.js';
import type { JsonObject } from '../flussonic/api.js';
import { jsonTypeOf, type JsonPage, type Query } from './http.js';

/** What a walk needs from the HTTP layer: UpstreamHttp provides it. */
export interface PageSource {
  readonly target: string;
  getPage(endpoint: string, path: string, query: Query | undefined, signal: AbortSignal): Promise<JsonPage>;
  countError(endpoint: string, reason: UpstreamError['reason']): void;
}

export interface CursorWalkOptions {
  /** Path template for metrics and errors (`/streams`, `/operations`). */
  readonly endpoint: string;
  /** Concrete path below the base URL. */
  readonly path: string;
  /** Key of the item array in each page (`streams`, `operations`). */
  readonly itemsKey: string;
  /** Field identifying an item, for dropping duplicates (`name`, `id`, `operationId`). */
  readonly key: string;
  /** Drop items seen on an earlier page (default true); off for callers that key items themselves. */
  readonly dedupe?: boolean;
  /** Query of every page (limit, select, filters, sort); the cursor is added from page 2 on. */
  readonly query: Query;
  /** Query parameter that carries the cursor (default `cursor`). */
  readonly cursorParam?: string;
  /** Field of the page that holds the next cursor (default `next`). */
  readonly nextKey?: string;
  /** Page cap. */
  readonly maxPages: number;
  /** Told how many duplicates were dropped, once at the end of a walk that dropped some. */
  readonly onDuplicates?: (dropped: number, pages: number) => void;
  /**
   * Told the bytes and items of every page read, once when the walk ends, cut short or not
   * (the page size of the next walk is learned from them: src/upstream/page-size.ts).
   */
  readonly onEnd?: (bytes: number, items: number) => void;
}

export async function* cursorWalk(source: PageSource, options: CursorWalkOptions, signal: AbortSignal): AsyncGenerator<JsonObject[], void, undefined> {
  const { endpoint, itemsKey, key, maxPages } = options;
  const cursorParam = options.cursorParam ?? 'cursor';
  const nextKey = options.nextKey ?? 'next';
  const dedupe = options.dedupe ?? true;
  const seenKeys = new Set<string | number>();
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  let duplicates = 0;
  let bytes = 0;
  let itemsRead = 0;

  const stop = (error: UpstreamError): UpstreamError => {
    source.countError(endpoint, error.reason);
    return error;
  };
  const fail = <K extends UpstreamKind>(kind: K, details: DetailsOf<K>) => stop(upstreamError(kind, { target: source.target, endpoint }, details));

  try {
    for (;;) {
      const query = cursor === undefined ? options.query : { ...options.query, [cursorParam]: cursor };
      const { body: page, bytes: pageBytes } = await source.getPage(endpoint, options.path, query, signal);
      pages++;
      bytes += pageBytes;

      const items = page[itemsKey];
      if (!Array.isArray(items)) throw fail('page_items_not_array', { page: pages, key: itemsKey, got: jsonTypeOf(items) });
      itemsRead += items.length;
      const next = page[nextKey];
      if (next !== undefined && next !== null && typeof next !== 'string') {
        throw fail('page_next_not_string', { page: pages, key: nextKey, got: jsonTypeOf(next) });
      }

      // Keep the page's own array when it holds nothing seen before (the common case): no copy.
      let fresh: JsonObject[] | undefined;
      for (let i = 0; i < items.length; i++) {
        const item: unknown = items[i];
        if (typeof item !== 'object' || item === null || Array.isArray(item)) {
          throw fail('page_item_not_object', { page: pages, key: itemsKey, index: i, got: jsonTypeOf(item) });
        }
        if (!dedupe) continue;
        const id = (item as JsonObject)[key];
        // Items without a usable key cannot be de-duplicated; they pass, and the collector reports them.
        const isDuplicate = (typeof id === 'string' || typeof id === 'number') && seenKeys.has(id);
        if (isDuplicate) {
          duplicates++;
          if (!fresh) fresh = (items as JsonObject[]).slice(0, i);
          continue;
        }
        if (typeof id === 'string' || typeof id === 'number') seenKeys.add(id);
        if (fresh) fresh.push(item as JsonObject);
      }
      const added = fresh ?? (items as JsonObject[]);
      if (added.length > 0) yield added;

      if (next === undefined || next === null || next === '') break;
      if (added.length === 0) {
        throw fail('cursor_no_progress', { page: pages, key: nextKey, got: dedupe ? 'no new items' : 'no items' });
      }
      if (seenCursors.has(next)) throw fail('cursor_repeated', { page: pages });
      if (pages >= maxPages) throw fail('cursor_page_cap', { cap: maxPages, key: nextKey });
      seenCursors.add(next);
      cursor = next;
    }
  } finally {
    options.onEnd?.(bytes, itemsRead);
  }
  if (duplicates > 0) options.onDuplicates?.(duplicates, pages);
}
