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

  /** Starts a poll: `constLabels` of its writer, and the time entries used in it are stamped with. */
  begin(constLabels: string, nowMs: number): void {
    if (constLabels !== this.constLabels) {
      this.byLabel.clear();
      this.constLabels = constLabels;
    }
    this.now = nowMs;
  }

  /** The block of `{<const>,<label>="<value>"}`, made by `make` the first time. */
  get(label: string, value: string, make: () => Uint8Array): Uint8Array {
    let values = this.byLabel.get(label);
    if (values === undefined) {
      values = new Map();
      this.byLabel.set(label, values);
    }
    let entry = values.get(value);
    if (entry === undefined) {
      entry = { block: make(), usedAt: this.now };
      values.set(value, entry);
    } else entry.usedAt = this.now;
    return entry.block;
  }

  /** Frees the blocks not used since `nowMs - staleAfterMs`; returns how many were freed. */
  sweep(nowMs: number, staleAfterMs: number): number {
    let freed = 0;
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
