/**
 * The aggregates of the sessions collector (sessions.ts): one group per combination of grouping
 * label values, and one duration histogram per protocol.
 */
import { SESSION_DURATION_BUCKETS } from '../metrics/catalogue.js';
import type { LabelBlock } from '../metrics/series.js';

/** Aggregated counters of one combination of grouping label values. */
export class SessionGroup {
  /** Open sessions at the last committed poll. */
  open = 0;
  /** The rendered label block, kept across polls (for the writer's constant labels in `blockFor`). */
  block: LabelBlock | undefined;
  opened = 0;
  closed = 0;
  sentBytes = 0;
  /** Unix ms of the last committed poll that listed a session of this group. */
  seenAtMs = Number.NaN;
  /**
   * The key (groupKey() of the label values) is all a group keeps of its values: they are read
   * back from it (valuesOfKey()) when the label block is made, once in the group's life. A values
   * array of its own cost 150 bytes a group, more than the rest of the group.
   */
  constructor(readonly key: string) {}
}

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

export function byKey(a: SessionGroup, b: SessionGroup): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Two arrays sorted by key, merged into one. */
export function mergeSorted(a: readonly SessionGroup[], b: readonly SessionGroup[]): SessionGroup[] {
  const out = new Array<SessionGroup>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = byKey(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
