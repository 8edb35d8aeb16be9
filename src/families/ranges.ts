/**
 * The valid range of every family's values, in one place. An upstream that answers nonsense
 * (issue 10: every number negated gave 317 negative counters, a CPU ratio of -0.14 and a GPU at
 * -42 °C, with nothing logged) must not reach Prometheus: a value outside its family's range is
 * not exported, is counted in flussonic_exporter_invalid_values_total{server,family} and logged.
 *
 * Ranges come from rules by name suffix (the unit, per Prometheus naming) with explicit
 * overrides; the catalogue attaches the result to each FamilyDef when it is built (rangeFor()).
 */
import type { FamilyDef, MetricType } from './catalogue.js';

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

const NON_NEGATIVE: ValueRange = Object.freeze({ min: 0, max: Infinity });
const BOOLEAN: ValueRange = Object.freeze({ min: 0, max: 1 });
const RATIO: ValueRange = Object.freeze({ min: 0, max: 1 });
const TIMESTAMP: ValueRange = Object.freeze({ min: TIMESTAMP_MIN_SECONDS, max: Infinity, timestampMaxAheadSeconds: TIMESTAMP_MAX_AHEAD_SECONDS });
/** A device temperature: at or above freezing (no GPU runs colder), below any chip's shutdown point. */
const DEVICE_CELSIUS: ValueRange = Object.freeze({ min: 0, max: 150 });

/** Families whose range the suffix rules do not give. */
const OVERRIDES: Readonly<Record<string, ValueRange>> = {
  // Usage of a link or of the Erlang schedulers can exceed 100 % of the nominal capacity.
  flussonic_server_bandwidth_usage_ratio: NON_NEGATIVE,
  flussonic_server_scheduler_load_ratio: NON_NEGATIVE,
  flussonic_stream_alive: BOOLEAN,
  flussonic_stream_backup_active: BOOLEAN,
  flussonic_stream_transcoder_running: BOOLEAN,
  flussonic_stream_transcoder_overloaded: BOOLEAN,
  flussonic_stream_dvr_enabled: BOOLEAN,
  flussonic_stream_dvr_replication_running: BOOLEAN,
  flussonic_stream_publish_enabled: BOOLEAN,
  flussonic_server_status: BOOLEAN,
  flussonic_stream_status: BOOLEAN,
  flussonic_up: BOOLEAN,
  flussonic_catena_up: BOOLEAN,
  // The start of a stream or server is a time; `_start_time_seconds` is caught by the rule too.
};

/** The range of a family, by override, else by the unit its name ends in; never negative. */
export function rangeFor(name: string, type: MetricType): ValueRange {
  const override = OVERRIDES[name];
  if (override) return override;
  if (name.endsWith('_info')) return { min: 1, max: 1 };
  if (name.endsWith('_timestamp_seconds') || name.endsWith('_start_time_seconds')) return TIMESTAMP;
  if (name.endsWith('_ratio')) return RATIO;
  if (name.endsWith('_celsius')) return DEVICE_CELSIUS;
  // Counters, byte totals, rates, durations, counts of clients, streams, files, frames: >= 0.
  void type;
  return NON_NEGATIVE;
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
  accept(def: FamilyDef, value: number, labels: readonly string[]): boolean {
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
