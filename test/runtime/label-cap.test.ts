/**
 * A stream named with 100 KB of text reaches /metrics capped (max_label_value_bytes), its series
 * distinct from another long name that shares the beginning, and the cut counted per family in
 * flussonic_exporter_label_values_truncated_total.
 */
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { serverConfig } from '../helpers/runtime.js';
import { samples, value } from '../helpers/exposition.js';
import { fleetConfig, startExporter, stopExporters } from '../fleet/helpers.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ streams: 1, sessions: 0, clock: 'manual', churn: false, seed: 3 });
});
afterAll(async () => sim?.close());
afterEach(stopExporters);

test('a 100 KB stream name is exported capped with a hash suffix, and counted', async () => {
  const common = 'n'.repeat(100_000);
  sim.world.streams.put(`${common}-1`, {});
  sim.world.streams.put(`${common}-2`, {});
  const h = startExporter(fleetConfig([serverConfig('edge-1', sim.url)], {}, []));
  await h.exporter.pollOnce();
  const metrics = (await h.get('/metrics')).body;
  const long = samples(metrics, 'flussonic_stream_info').map((s) => s.labels.stream!).filter((s) => s.startsWith('nnn'));
  expect(long).toHaveLength(2);
  expect(new Set(long).size).toBe(2);
  for (const stream of long) {
    expect(Buffer.byteLength(stream)).toBeLessThanOrEqual(256);
    expect(stream).toMatch(/^n+~[0-9a-f]{8}$/);
  }
  expect(metrics.length).toBeLessThan(200_000);
  expect(value(metrics, 'flussonic_exporter_label_values_truncated_total', { server: 'edge-1', family: 'flussonic_stream_info' })).toBe(2);
});
