/**
 * Slot numbers found by hash: an open-addressing table (linear probing, deletion by backward
 * shift, never fuller than half, halved once under an eighth full). What a slot holds is its
 * owner's (SessionIds keeps ids as words, GroupIndex keys as strings); the owner says where a
 * slot's hash puts it (`hashOfSlot`) and finds by probing `buckets` from its hash (masked by the
 * length less one), comparing what it keeps, until an empty bucket (0). Read `buckets` once a find:
 * it is replaced as the table grows and shrinks.
 */
export class SlotIndex {
  /** Slot + 1, 0 for an empty bucket; a power of two long. */
  buckets: Int32Array;
  private count = 0;

  constructor(
    /** The hash of what `slot` holds, as the owner finds it by (read while the slot is indexed). */
    private readonly hashOfSlot: (slot: number) => number,
    private readonly minBuckets: number,
  ) {
    this.buckets = new Int32Array(minBuckets);
  }

  get size(): number {
    return this.count;
  }

  /** Indexes `slot` (not indexed yet; its hash readable). */
  add(slot: number): void {
    if ((this.count + 1) * 2 > this.buckets.length) this.rehash(this.buckets.length * 2);
    this.place(slot);
    this.count++;
  }

  /** Takes `slot` out, if indexed; before the owner forgets what it holds (its hash is read). */
  remove(slot: number): void {
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    let hole = this.homeOf(slot);
    while (buckets[hole] !== slot + 1) {
      if (buckets[hole] === 0) return;
      hole = (hole + 1) & mask;
    }
    // Backward shift: later entries of the run move into the hole unless their home lies after it.
    for (let j = (hole + 1) & mask; buckets[j] !== 0; j = (j + 1) & mask) {
      const home = this.homeOf(buckets[j]! - 1);
      const between = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (between) continue;
      buckets[hole] = buckets[j]!;
      hole = j;
    }
    buckets[hole] = 0;
    this.count--;
    if (this.buckets.length > this.minBuckets && this.count * 8 < this.buckets.length) this.rehash(this.buckets.length / 2);
  }

  /** Calls `fn` with every indexed slot (which it must not add or remove meanwhile). */
  forEach(fn: (slot: number) => void): void {
    const buckets = this.buckets;
    for (let i = 0; i < buckets.length; i++) if (buckets[i] !== 0) fn(buckets[i]! - 1);
  }

  clear(): void {
    this.buckets = new Int32Array(this.minBuckets);
    this.count = 0;
  }

  private homeOf(slot: number): number {
    return this.hashOfSlot(slot) & (this.buckets.length - 1);
  }

  private place(slot: number): void {
    const mask = this.buckets.length - 1;
    let i = this.homeOf(slot);
    while (this.buckets[i] !== 0) i = (i + 1) & mask;
    this.buckets[i] = slot + 1;
  }

  private rehash(size: number): void {
    const old = this.buckets;
    this.buckets = new Int32Array(size);
    for (let i = 0; i < old.length; i++) if (old[i] !== 0) this.place(old[i]! - 1);
  }
}
