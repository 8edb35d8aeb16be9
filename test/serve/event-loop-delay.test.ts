import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { EventLoopDelay, EVENT_LOOP_DELAY_METRICS } from '../../src/serve/event-loop-delay.js';
import { SelfMetrics } from '../../src/serve/self.js';

/** Keeps the event loop busy for `ms` (a stall the monitor must see). */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function read(registry: Registry, stat: string): Promise<number> {
  const metric = await registry.getSingleMetric(`nodejs_eventloop_lag_${stat}_seconds`)!.get();
  return metric.values[0]!.value;
}

describe('event-loop delay sampled around scrapes', () => {
  it('sees a stall that happens while sampling', async () => {
    const registry = new Registry();
    const delay = new EventLoopDelay(registry, 5000);
    delay.busy();
    await tick(500);
    block(300);
    await tick(100);
    expect(await read(registry, 'max')).toBeGreaterThan(0.2);
    expect(await read(registry, 'p50')).toBeLessThan(0.2);
  });

  it('stops sampling once quiet, so a later stall is not recorded until a scrape comes again', async () => {
    const registry = new Registry();
    const delay = new EventLoopDelay(registry, 400);
    delay.busy();
    await tick(600); // quiet after 400 ms: sampling stopped
    const busyMax = await read(registry, 'max');
    expect(busyMax).toBeLessThan(0.2);
    block(300);
    await tick(100);
    expect(await read(registry, 'max')).toBe(busyMax);
    delay.busy(); // a scrape again: sampling again
    await tick(60);
    block(200);
    await tick(60);
    expect(await read(registry, 'max')).toBeGreaterThan(0.12);
  });

  it('gives every gauge of a scrape the same spell, with figures that agree with each other', async () => {
    const registry = new Registry();
    const delay = new EventLoopDelay(registry, 5000);
    delay.busy();
    for (let i = 0; i < 6; i++) {
      await tick(60);
      block(10 + 20 * i);
    }
    await tick(60);
    const stats = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'];
    const first = await Promise.all(stats.map((s) => read(registry, s)));
    // Read again with no sample between: the same spell, read in another order.
    const again = await Promise.all([...stats].reverse().map((s) => read(registry, s)));
    expect(again.reverse()).toEqual(first);
    const [min, max, mean, stddev, p50, p90, p99] = first as [number, number, number, number, number, number, number];
    expect(max).toBeGreaterThan(0.05); // the 110 ms stall, less at most one sampling period
    expect(min).toBeLessThanOrEqual(p50);
    expect(p50).toBeLessThanOrEqual(p90);
    expect(p90).toBeLessThanOrEqual(p99);
    expect(p99).toBeLessThanOrEqual(max);
    expect(mean).toBeGreaterThan(min);
    expect(mean).toBeLessThan(max);
    // Stalls of 10-110 ms among near-zero samples: spread out, and never more than half the range.
    expect(stddev).toBeGreaterThan(0.005);
    expect(stddev).toBeLessThanOrEqual((max - min) / 2 + 1e-9);
  });

  it('reports the setImmediate lag of the previous scrape as nodejs_eventloop_lag_seconds', async () => {
    const registry = new Registry();
    new EventLoopDelay(registry, 5000);
    const lag = () => registry.getSingleMetric('nodejs_eventloop_lag_seconds')!.get().then((m) => m.values[0]!.value);
    expect(await lag()).toBe(0);
    block(120); // the setImmediate started by the read above waits for this
    await tick(10);
    expect(await lag()).toBeGreaterThan(0.1);
  });

  it('replaces prom-client gauges of the same names in the self-metrics', async () => {
    const self = new SelfMetrics({ version: 't', revision: 'r' });
    const text = await self.render();
    for (const name of EVENT_LOOP_DELAY_METRICS) expect(text.match(new RegExp(`^# TYPE ${name} gauge$`, 'gm'))).toHaveLength(1);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });
});
