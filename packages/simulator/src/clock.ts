/**
 * Simulated time. `manual` time moves only when a test calls advance(), so tests never sleep;
 * `real` time follows the wall clock (plus whatever advance() added, to let a demo jump ahead).
 */
export type ClockMode = 'real' | 'manual';

/** 2026-01-01T00:00:00Z: where a manual clock starts unless told otherwise. */
export const DEFAULT_START_TIME = Date.UTC(2026, 0, 1);

export class SimClock {
  private offset = 0;
  private manualNow: number;

  constructor(
    readonly mode: ClockMode,
    startTime: number = DEFAULT_START_TIME,
  ) {
    this.manualNow = startTime;
  }

  now(): number {
    return this.mode === 'manual' ? this.manualNow : Date.now() + this.offset;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms): ms must be a finite number >= 0, got ${ms}`);
    if (this.mode === 'manual') this.manualNow += ms;
    else this.offset += ms;
  }
}
