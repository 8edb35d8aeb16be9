/**
 * Operation records created in the future. Counted, one record with `createdAt: 2099-01-01` would
 * move the read position to 2099, so every later operation (created before 2099) would be skipped
 * while flussonic_catena_up stayed 1, and the bad position would be saved in the state file. A
 * record more than `max_clock_skew` ahead of the exporter's clock is not counted and does not move
 * the position: it is counted in
 * flussonic_catena_records_rejected_total{reason="future"} and logged, once per record. Should
 * the clocks agree later (the record's time comes), it is counted then like any other.
 */
import type { Logger } from 'pino';
import { formatIsoMs } from './time.js';
import type { Operation } from './records.js';

/** Record ids remembered so that a record read again each poll is counted and logged once. */
const IDS_KEPT = 10_000;

export class FutureRecords {
  /** Distinct records rejected as future (the counter's value). */
  count = 0;
  private readonly seen = new Set<string>();

  constructor(private readonly maxClockSkewMs: number) {}

  /** Whether the record is too far ahead of `nowMs` to be counted; a new one is counted and logged. */
  reject(op: Operation, nowMs: number, log: Logger): boolean {
    if (op.createdAtMs <= nowMs + this.maxClockSkewMs) return false;
    if (!this.seen.has(op.operationId)) {
      if (this.seen.size >= IDS_KEPT) this.seen.clear();
      this.seen.add(op.operationId);
      this.count++;
      log.warn(
        { operationId: op.operationId, createdAt: formatIsoMs(op.createdAtMs), now: formatIsoMs(nowMs), maxClockSkewMs: this.maxClockSkewMs },
        'operation record not counted: its createdAt is further ahead of this host\'s clock than max_clock_skew',
      );
    }
    return true;
  }
}
