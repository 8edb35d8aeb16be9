/**
 * Encoded label blocks (`{server="edge-1",stream="a"}` as UTF-8) kept across polls by a collector
 * that writes the same label sets every poll: a stream's ~18 series share one block, built once in
 * the stream's life instead of once per sample and poll. Entries not used for `stale_after` are
 * freed (sweep()), so streams that were deleted do not stay in memory.
 */

import { widened } from '../lib/typed-arrays.js';

export class LabelBlockCache {
  /** Per label name (after the constant labels), per value: the slot of its block. */
  private readonly byLabel = new Map<string, Map<string, number>>();
  /**
   * Per slot, the block and the time it was last used: two arrays rather than an object per
   * block (and a boxed number for its time), about 40 bytes a block less. Freed slots are reused.
   */
  private blocks: (Uint8Array | undefined)[] = [];
  private usedAt = new Float64Array(0);
  private readonly free: number[] = [];
  /** The writer's constant labels the blocks were made for; other ones clear the cache. */
  private constLabels: string | undefined;
  private now = 0;
  /** The last block looked up: a stream's families ask for the same one a dozen times in a row. */
  private lastLabel: string | undefined;
  private lastValue: string | undefined;
  private lastSlot = -1;

  /** Starts a poll: `constLabels` of its writer, and the time entries used in it are stamped with. */
  begin(constLabels: string, nowMs: number): void {
    if (constLabels !== this.constLabels) {
      this.byLabel.clear();
      this.blocks = [];
      this.usedAt = new Float64Array(0);
      this.free.length = 0;
      this.constLabels = constLabels;
    }
    this.now = nowMs;
    this.lastSlot = -1;
  }

  /** The block of `{<const>,<label>="<value>"}`, if one was stored; marks it used. */
  get(label: string, value: string): Uint8Array | undefined {
    let slot = this.lastSlot;
    if (slot < 0 || value !== this.lastValue || label !== this.lastLabel) {
      const found = this.byLabel.get(label)?.get(value);
      if (found === undefined) return undefined;
      slot = found;
      this.lastLabel = label;
      this.lastValue = value;
      this.lastSlot = slot;
    }
    this.usedAt[slot] = this.now;
    return this.blocks[slot];
  }

  /** Stores the block of `{<const>,<label>="<value>"}` (after get() found none) and returns it. */
  set(label: string, value: string, block: Uint8Array): Uint8Array {
    let values = this.byLabel.get(label);
    if (values === undefined) {
      values = new Map();
      this.byLabel.set(label, values);
    }
    let slot = values.get(value);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.grow();
      values.set(value, slot);
    }
    this.blocks[slot] = block;
    this.usedAt[slot] = this.now;
    return block;
  }

  /** Frees the blocks not used since `nowMs - staleAfterMs`; returns how many were freed. */
  sweep(nowMs: number, staleAfterMs: number): number {
    let freed = 0;
    this.lastSlot = -1;
    const oldest = nowMs - staleAfterMs;
    for (const values of this.byLabel.values()) {
      for (const [value, slot] of values) {
        if (this.usedAt[slot]! < oldest) {
          values.delete(value);
          this.blocks[slot] = undefined;
          this.free.push(slot);
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

  /** A new slot past the last one handed out. */
  private grow(): number {
    const slot = this.blocks.length;
    if (slot === this.usedAt.length) this.usedAt = widened(this.usedAt, Math.max(64, slot * 2));
    this.blocks.push(undefined);
    return slot;
  }
}
