/**
 * Encoded label blocks (`{server="edge-1",stream="a"}` as UTF-8) kept across polls by a collector
 * that writes the same label sets every poll: a stream's ~18 series share one block, built once in
 * the stream's life instead of once per sample and poll. Entries not used for `stale_after` are
 * freed (sweep()), so streams that were deleted do not stay in memory.
 */

interface Entry {
  readonly block: Uint8Array;
  usedAt: number;
}

export class LabelBlockCache {
  /** Per label name (after the constant labels), per value. */
  private readonly byLabel = new Map<string, Map<string, Entry>>();
  /** The writer's constant labels the blocks were made for; other ones clear the cache. */
  private constLabels: string | undefined;
  private now = 0;
  /** The last block looked up: a stream's families ask for the same one a dozen times in a row. */
  private lastLabel: string | undefined;
  private lastValue: string | undefined;
  private lastEntry: Entry | undefined;

  /** Starts a poll: `constLabels` of its writer, and the time entries used in it are stamped with. */
  begin(constLabels: string, nowMs: number): void {
    if (constLabels !== this.constLabels) {
      this.byLabel.clear();
      this.constLabels = constLabels;
    }
    this.now = nowMs;
    this.lastEntry = undefined;
  }

  /** The block of `{<const>,<label>="<value>"}`, if one was stored; marks it used. */
  get(label: string, value: string): Uint8Array | undefined {
    let entry = this.lastEntry;
    if (entry === undefined || value !== this.lastValue || label !== this.lastLabel) {
      entry = this.byLabel.get(label)?.get(value);
      if (entry === undefined) return undefined;
      this.lastLabel = label;
      this.lastValue = value;
      this.lastEntry = entry;
    }
    entry.usedAt = this.now;
    return entry.block;
  }

  /** Stores the block of `{<const>,<label>="<value>"}` (after get() found none) and returns it. */
  set(label: string, value: string, block: Uint8Array): Uint8Array {
    let values = this.byLabel.get(label);
    if (values === undefined) {
      values = new Map();
      this.byLabel.set(label, values);
    }
    values.set(value, { block, usedAt: this.now });
    return block;
  }

  /** Frees the blocks not used since `nowMs - staleAfterMs`; returns how many were freed. */
  sweep(nowMs: number, staleAfterMs: number): number {
    let freed = 0;
    this.lastEntry = undefined;
    const oldest = nowMs - staleAfterMs;
    for (const values of this.byLabel.values()) {
      for (const [value, entry] of values) {
        if (entry.usedAt < oldest) {
          values.delete(value);
          freed++;
        }
      }
    }
    return freed;
  }

  get size(): number {
    let n = 0;
    for (const values of this.byLabel.values()) n += values.size;
    return n;
  }
}
