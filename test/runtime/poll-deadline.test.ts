/**
 * A poll that reaches its deadline is counted per target in
 * flussonic_exporter_poll_deadline_missed_total{server}, exported from 0 once the target was
 * polled: the simulator's `hang` fault stalls /streams past the deadline of a 2 s interval (1 s),
 * with a request timeout (1.5 s) that would end later.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { inProcessChannels } from '../../src/threads/in-process.js';
import { poolExporter, type PoolExporter } from '../helpers/pool-exporter.js';
import { captureLogger, exporterConfig, serverConfig } from '../helpers/runtime.js';
import { value } from '../helpers/exposition.js';

const MISSED = 'flussonic_exporter_poll_deadline_missed_total';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ streams: 3, sessions: 5, clock: 'manual', churn: false, seed: 5, shape: 'nested' });
});
afterAll(() => sim?.close());

const running: PoolExporter[] = [];
afterEach(async () => {
  sim.faults.clear();
  await Promise.all(running.splice(0).map((e) => e.stop()));
});

it('counts a poll that reached its deadline, for that target only', async () => {
  const log = captureLogger();
  const exporter = poolExporter({
    config: exporterConfig([serverConfig('slow', sim.url, { pollIntervalMs: 2000, timeoutMs: 1500 }), serverConfig('quick', sim.url)], { workers: 1 }),
    logger: log.logger,
    version: 'test',
    channels: inProcessChannels({ log: log.logger, userAgent: 'flussonic-exporter/test' }),
  });
  running.push(exporter);
  const metrics = async () => (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;

  await exporter.pollOnce();
  let text = await metrics();
  expect(value(text, MISSED, { server: 'slow' })).toBe(0);
  expect(value(text, MISSED, { server: 'quick' })).toBe(0);

  sim.faults.set('/streams', { hang: true });
  await exporter.pollOnce('slow');
  text = await metrics();
  expect(value(text, 'flussonic_up', { server: 'slow' })).toBe(0);
  expect(value(text, MISSED, { server: 'slow' })).toBe(1);
  expect(value(text, MISSED, { server: 'quick' })).toBe(0);

  // A poll in time adds nothing.
  sim.faults.clear();
  await exporter.pollOnce('slow');
  text = await metrics();
  expect(value(text, 'flussonic_up', { server: 'slow' })).toBe(1);
  expect(value(text, MISSED, { server: 'slow' })).toBe(1);
}, 20_000);

it('withdraws the series of a target that left the config', async () => {
  const log = captureLogger();
  const config = exporterConfig([serverConfig('gone', sim.url), serverConfig('kept', sim.url)], { workers: 1 });
  const exporter = poolExporter({ config, logger: log.logger, version: 'test', channels: inProcessChannels({ log: log.logger, userAgent: 'flussonic-exporter/test' }) });
  running.push(exporter);
  await exporter.pollOnce();
  exporter.reload(exporterConfig([serverConfig('kept', sim.url)], { workers: 1 }));
  await exporter.pollOnce();
  const text = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
  expect(value(text, MISSED, { server: 'gone' })).toBeUndefined();
  expect(value(text, MISSED, { server: 'kept' })).toBe(0);
}, 20_000);
