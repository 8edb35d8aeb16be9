/**
 * prom-client's event-loop gauges (`nodejs_eventloop_lag_seconds` and
 * `nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds`, same names and help), measured
 * only around scrapes. prom-client samples the delay every 10 ms for the life of the process, and
 * each wake costs about 80 µs of CPU on this kind of machine: 8 ms a second with nothing to do,
 * more than a 1,000-stream poll every 10 s costs in its worker. Here the sampling runs every 50 ms
 * from a scrape until `quietMs` after the last one (250 ms: the scrape's response is sent by then,
 * and each sample is a wake of its own): what the gauges describe is the serving thread while it
 * serves (a stall of 50 ms or more is always seen, a shorter one in proportion to its length), and
 * between scrapes the process sleeps. A scrape after a quiet spell reports the delays of the last
 * spell; none measured yet reads 0.
 *
 * The samples of a spell are kept as they are (a few per scrape), so each figure is exact and
 * reading them costs next to nothing; Node's histogram (monitorEventLoopDelay) walks its every
 * bucket for the standard deviation, about 0.3 ms a scrape. `nodejs_eventloop_lag_seconds` is
 * prom-client's: how long a setImmediate() started at one scrape waited, read at the next.
 */
import { Gauge, type Registry } from 'prom-client';

const RESOLUTION_MS = 50;
/** Sampling stops this long after the last scrape. */
const QUIET_MS = 250;
/** Samples kept for the percentiles between two reads (20 minutes of sampling); the others still count in min, max, mean and stddev. */
const MAX_KEPT = 24_000;

/** The delays (ms) sampled since the last read. */
class Spell {
  count = 0;
  sum = 0;
  sumSquares = 0;
  min = Number.POSITIVE_INFINITY;
  max = 0;
  readonly kept: number[] = [];

  add(ms: number): void {
    this.count++;
    this.sum += ms;
    this.sumSquares += ms * ms;
    if (ms < this.min) this.min = ms;
    if (ms > this.max) this.max = ms;
    if (this.kept.length < MAX_KEPT) this.kept.push(ms);
  }

  /** [min, max, mean, stddev, p50, p90, p99] in seconds. */
  figures(): number[] {
    const mean = this.sum / this.count;
    const variance = Math.max(0, this.sumSquares / this.count - mean * mean);
    const sorted = this.kept.sort((a, b) => a - b);
    // Nearest rank: the smallest sample with at least p% of the samples at or below it.
    const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
    return [this.min, this.max, mean, Math.sqrt(variance), at(50), at(90), at(99)].map((ms) => ms / 1000);
  }
}

const STATS = [
  ['min', 'The minimum recorded event loop delay.'],
  ['max', 'The maximum recorded event loop delay.'],
  ['mean', 'The mean of the recorded event loop delays.'],
  ['stddev', 'The standard deviation of the recorded event loop delays.'],
  ['p50', 'The 50th percentile of the recorded event loop delays.'],
  ['p90', 'The 90th percentile of the recorded event loop delays.'],
  ['p99', 'The 99th percentile of the recorded event loop delays.'],
] as const;

const LAG = 'nodejs_eventloop_lag_seconds';
const NONE: readonly number[] = STATS.map(() => 0);

/** The names of the gauges this module replaces in prom-client's default metrics. */
export const EVENT_LOOP_DELAY_METRICS: readonly string[] = [LAG, ...STATS.map(([stat]) => `nodejs_eventloop_lag_${stat}_seconds`)];

export class EventLoopDelay {
  private spell = new Spell();
  /** The spell's figures were read: the next sample starts a new spell. */
  private read = false;
  /** The spell's figures, in seconds, once computed (until its next sample). */
  private figures: readonly number[] | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** When the next sample's timer is due (performance.now()). */
  private due = 0;
  /** Stops the sampling QUIET_MS after the last busy(); re-armed by refresh() (also after it fired). */
  private quiet: NodeJS.Timeout | undefined;
  /** The last setImmediate() delay measured, in seconds. */
  private lag = 0;

  constructor(
    registry: Registry,
    private readonly quietMs = QUIET_MS,
  ) {
    // The last lag measured, and a new measurement started for the next scrape.
    const lag = (): number => {
      const start = process.hrtime.bigint();
      setImmediate(() => (this.lag = Number(process.hrtime.bigint() - start) / 1e9));
      return this.lag;
    };
    new Gauge({
      name: LAG,
      help: 'Lag of event loop in seconds.',
      registers: [registry],
      collect() {
        this.set(lag());
      },
    });
    STATS.forEach(([stat, help], i) => {
      const read = (): number => this.current()[i]!;
      new Gauge({
        name: `nodejs_eventloop_lag_${stat}_seconds`,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    });
  }

  /** A scrape: sample (again) until `quietMs` after the last call. */
  busy(): void {
    if (this.timer === undefined) {
      this.due = performance.now() + RESOLUTION_MS;
      this.timer = setInterval(() => this.sample(), RESOLUTION_MS).unref();
    }
    if (this.quiet === undefined) this.quiet = setTimeout(() => this.stop(), this.quietMs).unref();
    else this.quiet.refresh();
  }

  private sample(): void {
    const now = performance.now();
    if (this.read) {
      this.spell = new Spell();
      this.read = false;
    }
    this.spell.add(Math.max(0, now - this.due));
    this.figures = undefined;
    // setInterval schedules the next run an interval after this one started.
    this.due = now + RESOLUTION_MS;
  }

  /**
   * The figures of the samples since the last read (the same again until a new sample: every
   * gauge of a scrape reads the same spell); 0 before any sample.
   */
  private current(): readonly number[] {
    if (this.spell.count === 0) return NONE;
    this.read = true;
    return (this.figures ??= this.spell.figures());
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
