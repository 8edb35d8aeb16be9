import { SlotIndex } from '../lib/slot-index.js';
import { widened } from '../lib/typed-arrays.js';

/**
 * Which slot of the session table (session-table.ts) holds a listed session id.
 *
 * Flussonic's session ids are UUIDs. Kept as strings in a Map, an id cost about 100 bytes (the
 * 36-character string 56, its Map entry about 45), a third of all the sessions collector kept. A
 * UUID in its canonical lowercase text is kept here as its 128 bits instead, four Int32 words per
 * slot (in the slot's record of the session table, IdWordStore, so that finding a session and
 * updating it read the same cache line), found through an open-addressing table of slot numbers
 * (SlotIndex, src/lib/slot-index.ts): about 30 bytes a session,
 * 16 of them in the record. Any other id (other text, upper case) is kept as the string, in a Map:
 * every id is exact, so two sessions are never taken for one.
 */
export class SessionIds {
  /** Where the 128 bits of a slot's UUID are (valid where `packed` is 1). */
  private readonly store: IdWordStore;
  private packed = new Uint8Array(0);
  /** The slots of packed ids. */
  private readonly index: SlotIndex;
  /** Ids that are not canonical UUIDs, and the other way round. */
  private readonly others = new Map<string, number>();
  private readonly otherOf = new Map<number, string>();
  private readonly scratch = new Int32Array(4);

  /** `store`: the words kept beside what else the slots hold (SessionTable); by default, of their own. */
  constructor(store?: IdWordStore) {
    const kept = (this.store = store ?? new OwnWords());
    this.index = new SlotIndex((slot) => {
      const { words: w, stride, first } = kept;
      const at = slot * stride + first;
      return hashOf(w[at]!, w[at + 1]!, w[at + 2]!, w[at + 3]!);
    }, MIN_BUCKETS);
  }

  /** The slot of `id`, or -1. */
  find(id: string): number {
    const w = this.scratch;
    if (!pack(id, w)) return this.others.get(id) ?? -1;
    const { words, stride, first } = this.store;
    const buckets = this.index.buckets;
    const mask = buckets.length - 1;
    for (let i = hashOf(w[0]!, w[1]!, w[2]!, w[3]!) & mask; ; i = (i + 1) & mask) {
      const b = buckets[i]!;
      if (b === 0) return -1;
      const at = (b - 1) * stride + first;
      if (words[at] === w[0] && words[at + 1] === w[1] && words[at + 2] === w[2] && words[at + 3] === w[3]) return b - 1;
    }
  }

  /** Records that `slot` holds `id` (neither is recorded yet). */
  add(id: string, slot: number): void {
    const w = this.scratch;
    if (!pack(id, w)) {
      this.others.set(id, slot);
      this.otherOf.set(slot, id);
      return;
    }
    if (slot >= this.packed.length) this.widen(slot);
    this.store.reserve(slot);
    const { words, stride, first } = this.store;
    words.set(w, slot * stride + first);
    this.packed[slot] = 1;
    this.index.add(slot);
  }

  /** Whether `slot` holds an id. */
  has(slot: number): boolean {
    return this.packed[slot] === 1 || this.otherOf.has(slot);
  }

  /** Forgets the id of `slot`. */
  remove(slot: number): void {
    if (this.packed[slot] !== 1) {
      const id = this.otherOf.get(slot);
      if (id === undefined) return;
      this.otherOf.delete(slot);
      this.others.delete(id);
      return;
    }
    this.index.remove(slot);
    this.packed[slot] = 0;
  }

  clear(): void {
    this.packed = new Uint8Array(0);
    this.index.clear();
    this.others.clear();
    this.otherOf.clear();
  }

  get size(): number {
    return this.index.size + this.others.size;
  }

  /** Room for slots up to `slot`, growing by half (the table's slots are reused, so it seldom grows). */
  private widen(slot: number): void {
    const size = Math.max(1024, slot + 1, Math.ceil(this.packed.length * 1.5));
    this.packed = widened(this.packed, size);
  }
}

/**
 * Where SessionIds keeps the four words of a slot's UUID: `words[slot * stride + first]` and the
 * three after it, there once reserve(slot) returned.
 */
export interface IdWordStore {
  readonly words: Int32Array;
  readonly stride: number;
  readonly first: number;
  reserve(slot: number): void;
}

/** Words in an array of their own, four per slot. */
class OwnWords implements IdWordStore {
  words = new Int32Array(0);
  readonly stride = 4;
  readonly first = 0;
  reserve(slot: number): void {
    if ((slot + 1) * 4 <= this.words.length) return;
    // Grown in whole slots: a length of 1.5 times the last one need not be a multiple of 4.
    const slots = Math.max(1024, slot + 1, Math.ceil((this.words.length / 4) * 1.5));
    this.words = widened(this.words, slots * 4);
  }
}

const MIN_BUCKETS = 16;

/**
 * The 128 bits of a UUID in canonical lowercase text (8-4-4-4-12 hex digits) into four words;
 * false for any other text. Only one spelling packs, so a packed id is the text it came from.
 */
export function pack(id: string, out: Int32Array): boolean {
  if (id.length !== 36 || id.charCodeAt(8) !== 0x2d || id.charCodeAt(13) !== 0x2d || id.charCodeAt(18) !== 0x2d || id.charCodeAt(23) !== 0x2d) return false;
  let invalid = 0;
  let word = 0;
  for (let k = 0; k < 32; k++) {
    const c = id.charCodeAt(DIGIT_AT[k]!);
    const v = c > 0xff ? -1 : DIGIT[c]!;
    invalid |= v; // -1 (every bit) for a character that is not a lowercase hex digit
    word = (word << 4) | (v & 15);
    if ((k & 7) === 7) {
      out[k >> 3] = word;
      word = 0;
    }
  }
  return invalid >= 0;
}

/** Where the 32 digits of a canonical UUID are. */
const DIGIT_AT = Uint8Array.from({ length: 36 }, (_, i) => i).filter((i) => i !== 8 && i !== 13 && i !== 18 && i !== 23);

/** The value of a lowercase hex digit by character code, -1 for any other character below 256. */
const DIGIT = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) DIGIT['0123456789abcdef'.charCodeAt(i)] = i;

/** A 32-bit mix of the four words (murmur3's finaliser between them). */
function hashOf(a: number, b: number, c: number, d: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ b, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16) ^ c, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ d, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
