/**
 * How many items a walk of one collection asks for per page (`limit`): `page_size`, or the largest
 * of its halves (a half, a quarter, ... down to a sixteenth) whose pages stay within
 * PAGE_BYTES_GOAL of JSON, judged by the bytes per item of the previous walk of the same
 * collection and select, and whose walk stays within `max_pages`. The first walk after start asks
 * for `page_size`.
 *
 * Why bytes matter: a page is parsed whole and its objects stay alive until the page is mapped. A
 * poll worker's young generation is kept small for memory (semi-spaces of WORKER_SEMI_SPACE_MB),
 * and a page whose parsed tree outgrows a semi-space is copied by every scavenge during the page,
 * promoted, and collected again by a mark-compact. Nested stream items (Flussonic since 2025:
 * `stats.input` and `inputs` both carry media_info, and a select cannot reach below an array) take
 * 2.2 KB of JSON each, so 1,000 make a 2.2 MB page; with 1 MiB semi-spaces the nested poll of
 * 10,000 streams spent a quarter of its CPU in GC, and pages of 500 such items took a fifth off
 * the poll. Flat items (0.8 KB) keep their 1,000 (pages of 250 save them nothing).
 *
 * Halves, not any number: the limit stays the same from poll to poll while the items' size moves
 * a little with the data, so the requests a target sees are steady.
 *
 * The limit may change between walks without harm: Flussonic's cursor encodes the sort values of
 * the last item of a page, not the page size (API description, cursor paging).
 */

/** Pages are kept within this much JSON when the items allow. */
export const PAGE_BYTES_GOAL = 1.5 * 1024 * 1024;

/**
 * Pages never shrink below page_size / 2^MAX_HALVINGS (at most 16 times the pages of page_size),
 * nor so far that the last walk's items would need more than `max_pages` pages: the page cap keeps
 * its meaning.
 */
const MAX_HALVINGS = 4;

export class PageSize {
  private bytesPerItem = 0;
  private items = 0;

  constructor(
    /** The configured `page_size`: the most items a page asks for. */
    readonly maxItems: number,
    /** The configured `max_pages`: a half is not taken if the last walk's items would then need more pages. */
    readonly maxPages: number,
    readonly goalBytes: number = PAGE_BYTES_GOAL,
  ) {}

  /** The `limit` of the next walk's pages. */
  get limit(): number {
    let limit = this.maxItems;
    for (let halvings = 0; halvings < MAX_HALVINGS && limit > 1 && limit * this.bytesPerItem > this.goalBytes; halvings++) {
      const half = Math.floor(limit / 2);
      if (Math.ceil(this.items / half) > this.maxPages) break;
      limit = half;
    }
    return limit;
  }

  /** Learns from a walk that read `items` items in `bytes` bytes of JSON (nothing from an empty one). */
  learn(bytes: number, items: number): void {
    if (items > 0 && Number.isFinite(bytes) && bytes >= 0) {
      this.bytesPerItem = bytes / items;
      this.items = items;
    }
  }
}
