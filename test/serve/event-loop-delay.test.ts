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

  it('replaces prom-client gauges of the same names in the self-metrics', async () => {
    const self = new SelfMetrics({ version: 't', revision: 'r' });
    const text = await self.render();
    for (const name of EVENT_LOOP_DELAY_METRICS) expect(text.match(new RegExp(`^# TYPE ${name} gauge$`, 'gm'))).toHaveLength(1);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });
});
