/**
 * The aggregates of the sessions collector (sessions.ts): one group per combination of grouping
 * label values, and one duration histogram per protocol.
 */
import type { LabelBlock } from '../render/series.js';
import { SlotIndex } from '../lib/slot-index.js';
import { widened } from '../lib/typed-arrays.js';

/**
 * The session groups, one slot per combination of grouping label values, in typed arrays (a
 * struct of arrays, like the session table): a group is its counters, its key and its label
 * block, about 60 bytes instead of an object with boxed numbers (~120). Slots of withdrawn groups
 * are reused. A group is named by its slot in the session table and the collector's maps.
 */
export class GroupTable {
  /** Open sessions at the last committed poll. */
  open = new Int32Array(0);
  opened = new Float64Array(0);
  closed = new Float64Array(0);
  sentBytes = new Float64Array(0);
  /** Unix ms of the last committed poll that listed a session of the group (NaN before). */
  seenAtMs = new Float64Array(0);
  /**
   * groupKey() of the label values: all a group keeps of them. They are read back from it
   * (valuesOfKey()) for the label block, once in the group's life.
   */
  key: string[] = [];
  /** The rendered label block, kept across polls (see SessionsCollector.write()). */
  block: (LabelBlock | undefined)[] = [];
  private used = 0;
  private readonly free: number[] = [];

  /** A slot for a new group, its counters at zero. */
  add(key: string): number {
    const slot = this.free.pop() ?? this.grow();
    this.open[slot] = 0;
    this.opened[slot] = 0;
    this.closed[slot] = 0;
    this.sentBytes[slot] = 0;
    this.seenAtMs[slot] = Number.NaN;
    this.key[slot] = key;
    this.block[slot] = undefined;
    return slot;
  }

  release(slot: number): void {
    this.key[slot] = '';
    this.block[slot] = undefined;
    this.free.push(slot);
  }

  clear(): void {
    this.used = 0;
    this.free.length = 0;
    this.key = [];
    this.block = [];
  }

  private grow(): number {
    if (this.used === this.open.length) {
      const size = Math.max(256, Math.ceil(this.open.length * 1.5));
      this.open = widened(this.open, size);
      this.opened = widened(this.opened, size);
      this.closed = widened(this.closed, size);
      this.sentBytes = widened(this.sentBytes, size);
      this.seenAtMs = widened(this.seenAtMs, size);
    }
    return this.used++;
  }
}

/**
 * The committed groups by key (a group of the walk in progress is not here until its commit):
 * their slots in a SlotIndex, the keys being the group table's own (GroupTable.key). A Map from key
 * to slot took about 52 bytes a group (it keeps room for twice the groups it holds); this takes 8
 * at most: at 1,000 streams and 5,000 sessions (2,200 groups), about 100 KB less a target.
 */
export class GroupIndex {
  private readonly index: SlotIndex;

  constructor(private readonly table: GroupTable) {
    this.index = new SlotIndex((slot) => hashOfKey(table.key[slot]!), 64);
  }

  get size(): number {
    return this.index.size;
  }

  /** The slot of the group with this key, or -1. */
  find(key: string): number {
    const keys = this.table.key;
    const buckets = this.index.buckets;
    const mask = buckets.length - 1;
    for (let i = hashOfKey(key) & mask; ; i = (i + 1) & mask) {
      const b = buckets[i]!;
      if (b === 0) return -1;
      if (keys[b - 1] === key) return b - 1;
    }
  }

  /** Indexes `slot` under its key (GroupTable.key), which no indexed group has. */
  add(slot: number): void {
    this.index.add(slot);
  }

  /** Takes `slot` out of the index; call it before the table releases the slot (its key is read). */
  remove(slot: number): void {
    this.index.remove(slot);
  }

  /** Calls `fn` with the slot of every indexed group (which it must not add or remove meanwhile). */
  forEach(fn: (slot: number) => void): void {
    this.index.forEach(fn);
  }

  /** The slots of every indexed group. */
  slots(): number[] {
    const out: number[] = [];
    this.index.forEach((slot) => out.push(slot));
    return out;
  }

  clear(): void {
    this.index.clear();
  }
}

/** FNV-1a over the key's UTF-16 units, its bits then mixed (murmur3's finaliser) for the mask's low bits. */
function hashOfKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Buckets of flussonic_session_duration_seconds: 10 s to 24 h. */
export const SESSION_DURATION_BUCKETS = [10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400] as const;

/** Histogram of lifetimes of one protocol; counts per bucket (not cumulative), +Inf is `count`. */
export class DurationHistogram {
  readonly bucketCounts = new Float64Array(SESSION_DURATION_BUCKETS.length);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    for (let i = 0; i < SESSION_DURATION_BUCKETS.length; i++) {
      if (seconds <= SESSION_DURATION_BUCKETS[i]!) {
        this.bucketCounts[i]!++;
        break;
      }
    }
    this.sum += seconds;
    this.count++;
  }

  cumulative(): number[] {
    const out: number[] = new Array<number>(this.bucketCounts.length);
    let running = 0;
    for (let i = 0; i < this.bucketCounts.length; i++) {
      running += this.bucketCounts[i]!;
      out[i] = running;
    }
    return out;
  }
}

const RS = '\u001e';
const US = '\u001f';

function hasSeparator(v: string): boolean {
  return v.includes(RS) || v.includes(US);
}

/** Unambiguous group keys: values joined by US (0x1f); JSON behind an RS (0x1e) when a value holds either. */
export function groupKey(values: readonly string[]): string {
  for (const v of values) if (hasSeparator(v)) return `${RS}${JSON.stringify(values)}`;
  return values.join(US);
}

/** The label values a key was made of (the inverse of groupKey()). */
export function valuesOfKey(key: string): string[] {
  return key.startsWith(RS) ? (JSON.parse(key.slice(1)) as string[]) : key.split(US);
}

/** Whether groupKey(values) equals `key`, without building it (a known session's regrouping check). */
export function isKeyOf(key: string, values: readonly string[]): boolean {
  if (key.startsWith(RS)) return groupKey(values) === key;
  let pos = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (i > 0) {
      if (key.charCodeAt(pos) !== 0x1f) return false;
      pos++;
    }
    // A value with a separator makes a JSON key, which a plain key never equals.
    if (!key.startsWith(v, pos) || hasSeparator(v)) return false;
    pos += v.length;
  }
  return pos === key.length;
}

/** Orders group slots by their keys. */
export function byKeyOf(keys: readonly string[]): (a: number, b: number) => number {
  return (a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0);
}

/** Two lists of group slots sorted by key, merged into one. */
export function mergeSorted(a: readonly number[], b: readonly number[], keys: readonly string[]): number[] {
  const out = new Array<number>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = keys[a[i]!]! <= keys[b[j]!]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
