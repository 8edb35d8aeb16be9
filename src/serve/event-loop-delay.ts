/**
 * prom-client's event-loop delay gauges (`nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds`,
 * same names and help), measured only around scrapes. prom-client samples the delay every 10 ms for
 * the life of the process, and each wake costs about 80 µs of CPU on this kind of machine: 8 ms a
 * second with nothing to do, more than a 1,000-stream poll every 10 s costs in its worker. Here the
 * sampling runs every 50 ms from a scrape until `quietMs` after the last one (250 ms: the scrape's
 * response is sent by then, and each sample is a wake of its own): what the gauges describe is the
 * serving thread while it serves (a stall of 50 ms or more is always seen, a shorter one in
 * proportion to its length), and between scrapes the process sleeps. A scrape after
 * a quiet spell reports the delays of the last spell; none measured yet reads 0.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

const RESOLUTION_MS = 50;
/** Sampling stops this long after the last scrape. */
const QUIET_MS = 250;

const GAUGES = [
  ['min', 'The minimum recorded event loop delay.', (h: IntervalHistogram) => h.min],
  ['max', 'The maximum recorded event loop delay.', (h: IntervalHistogram) => h.max],
  ['mean', 'The mean of the recorded event loop delays.', (h: IntervalHistogram) => h.mean],
  ['stddev', 'The standard deviation of the recorded event loop delays.', (h: IntervalHistogram) => h.stddev],
  ['p50', 'The 50th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(50)],
  ['p90', 'The 90th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(90)],
  ['p99', 'The 99th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(99)],
] as const;

/** The names of the gauges this module replaces in prom-client's default metrics. */
export const EVENT_LOOP_DELAY_METRICS: readonly string[] = GAUGES.map(([stat]) => `nodejs_eventloop_lag_${stat}_seconds`);

export class EventLoopDelay {
  private readonly histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private sampling = false;
  /** Stops the sampling QUIET_MS after the last busy(); re-armed by refresh() (also after it fired). */
  private quiet: NodeJS.Timeout | undefined;
  /** The figures of the last spell with samples, in seconds, per stat. */
  private last: readonly number[] = GAUGES.map(() => 0);

  constructor(
    registry: Registry,
    private readonly quietMs = QUIET_MS,
  ) {
    GAUGES.forEach(([stat, help], i) => {
      const read = (): number => this.read()[i]!;
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
    if (!this.sampling) {
      this.histogram.enable();
      this.sampling = true;
    }
    if (this.quiet === undefined) this.quiet = setTimeout(() => this.stop(), this.quietMs).unref();
    else this.quiet.refresh();
  }

  /** The figures since the last read (the last spell's when none were taken since), and a fresh start. */
  private read(): readonly number[] {
    if (this.histogram.count > 0) {
      this.last = GAUGES.map(([, , of]) => of(this.histogram) / 1e9);
      this.histogram.reset();
    }
    return this.last;
  }

  private stop(): void {
    this.histogram.disable();
    this.sampling = false;
  }
}
