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
  constructor(
    readonly key: string,
    readonly values: readonly string[],
  ) {}
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

/** Unambiguous group keys: values joined by US (0x1f); JSON behind an RS (0x1e) when a value holds either. */
export function groupKey(values: readonly string[]): string {
  for (const v of values) {
    if (v.includes('\u001e') || v.includes('\u001f')) return `\u001e${JSON.stringify(values)}`;
  }
  return values.join('\u001f');
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
