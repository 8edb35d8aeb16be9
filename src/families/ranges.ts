/**
 * Valid ranges of family values. An upstream that answers nonsense (every number negated: negative
 * counters, a CPU ratio of -0.14, a GPU at -42 °C) must not reach Prometheus: a value outside its
 * family's range is not exported, is counted in flussonic_exporter_invalid_values_total{server,family}
 * and logged.
 *
 * A family's range comes from the unit its name ends in (rangeFor(), per Prometheus naming), unless
 * its declaration names one (`range: BOOLEAN` beside the family, src/families/define.ts). A leaf:
 * no imports.
 */

export interface ValueRange {
  readonly min: number;
  readonly max: number;
  /**
   * A Unix time in seconds: valid from 2000-01-01 up to this many seconds after the time of the
   * check (a clock a little ahead is fine; a year 2099 is not).
   */
  readonly timestampMaxAheadSeconds?: number;
}

/** 2000-01-01T00:00:00Z: no Flussonic server, stream or operation is older. */
export const TIMESTAMP_MIN_SECONDS = 946_684_800;
/** How far ahead of the exporter's clock an upstream timestamp may be. */
export const TIMESTAMP_MAX_AHEAD_SECONDS = 86_400;

export const NON_NEGATIVE: ValueRange = Object.freeze({ min: 0, max: Infinity });
/** A flag or a state of a state set: 0 or 1. */
export const BOOLEAN: ValueRange = Object.freeze({ min: 0, max: 1 });
const RATIO: ValueRange = Object.freeze({ min: 0, max: 1 });
const INFO: ValueRange = Object.freeze({ min: 1, max: 1 });
const TIMESTAMP: ValueRange = Object.freeze({ min: TIMESTAMP_MIN_SECONDS, max: Infinity, timestampMaxAheadSeconds: TIMESTAMP_MAX_AHEAD_SECONDS });
/** A device temperature: at or above freezing (no GPU runs colder), below any chip's shutdown point. */
const DEVICE_CELSIUS: ValueRange = Object.freeze({ min: 0, max: 150 });

/**
 * A session's `opened_at` / `closed_at` (Unix ms, `utc_ms`): the API description's limits, 10^12 to
 * 10^13 (2001 to 2286). Both the polled sessions and the event sink's play_closed read them.
 */
export const SESSION_UTC_MS_RANGE: ValueRange = Object.freeze({ min: 1e12, max: 1e13 });
/** Whole seconds a session lasted: at most the span of its timestamps' bounds. */
export const SESSION_SECONDS_RANGE: ValueRange = Object.freeze({ min: 0, max: (SESSION_UTC_MS_RANGE.max - SESSION_UTC_MS_RANGE.min) / 1000 });

/** The range the unit a family's name ends in gives; never negative. */
export function rangeFor(name: string): ValueRange {
  if (name.endsWith('_info')) return INFO;
  if (name.endsWith('_timestamp_seconds') || name.endsWith('_start_time_seconds')) return TIMESTAMP;
  if (name.endsWith('_ratio')) return RATIO;
  if (name.endsWith('_celsius')) return DEVICE_CELSIUS;
  // Counters, byte totals, rates, durations, counts of clients, streams, files, frames: >= 0.
  return NON_NEGATIVE;
}

/** What a range check needs of a family: its name (for the count) and its range. */
export interface RangedFamily {
  readonly name: string;
  readonly range: ValueRange;
}

/** Whether a value is inside the family's range (always false for NaN and infinities). */
export function inRange(range: ValueRange, value: number, nowSeconds: number): boolean {
  if (!Number.isFinite(value) || value < range.min || value > range.max) return false;
  return range.timestampMaxAheadSeconds === undefined || value <= nowSeconds + range.timestampMaxAheadSeconds;
}

/** One value refused, for the log. */
export interface InvalidValue {
  readonly family: string;
  readonly labels: readonly string[];
  readonly value: number;
}

const EXAMPLES_KEPT = 5;

/**
 * The range check of one SeriesWriter (one collector run of one target): counts what was checked
 * and what was refused, per family, and keeps the first examples for the poll's one log line.
 */
export class ValueChecks {
  checked = 0;
  invalid = 0;
  readonly byFamily = new Map<string, number>();
  readonly examples: InvalidValue[] = [];
  private readonly nowSeconds = Date.now() / 1000;

  /** Whether the value may be exported; a refused one is counted. */
  accept(def: RangedFamily, value: number, labels: readonly string[]): boolean {
    // A timestamp of 0 is how upstreams write "never" (a stream nobody watched yet): absent, not nonsense.
    if (value === 0 && def.range.timestampMaxAheadSeconds !== undefined) return false;
    this.checked++;
    if (inRange(def.range, value, this.nowSeconds)) return true;
    this.invalid++;
    this.byFamily.set(def.name, (this.byFamily.get(def.name) ?? 0) + 1);
    if (this.examples.length < EXAMPLES_KEPT) this.examples.push({ family: def.name, labels: [...labels], value });
    return false;
  }

  /**
   * The rule by which a server answering nonsense is not `up 1`: the collector run fails with
   * reason `invalid_values` when more than a quarter of its checked values (at least 4) were out
   * of range. A few odd values (one stream with a clock ahead) only drop those values.
   */
  get mostlyInvalid(): boolean {
    return this.invalid >= 4 && this.invalid * 4 > this.checked;
  }
}

/** The failure of a collector run whose values were mostly out of range (see mostlyInvalid). */
export class InvalidValuesError extends Error {
  override name = 'InvalidValuesError';
  readonly reason = 'invalid_values';
  constructor(checks: ValueChecks) {
    super(`${checks.invalid} of ${checks.checked} values were outside their valid range: the upstream answers nonsense`);
  }
}
