/**
 * Worker threads under the pool and the HTTP app (test/helpers/pool-exporter.ts, app.inject
 * against the simulator): a crashed worker's targets go down and come back with their counters
 * going on, a busy worker never holds up a scrape, and targets spread over the workers by a stable
 * hash. The threads run test/fixtures/workers/faulty-worker.mjs, the real worker with switchable
 * faults.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { SelfMetrics } from '../../src/serve/self.js';
import { targetDescriptions } from '../../src/threads/target-descriptions.js';
import { threadChannels } from '../../src/threads/channels.js';
import { ownerOf, WorkerPool } from '../../src/threads/pool.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { poolExporter, type PoolExporter } from '../helpers/pool-exporter.js';
import { captureLogger, exporterConfig, serverConfig, type CapturedLog } from '../helpers/runtime.js';
import { samples, value } from '../helpers/exposition.js';

const FAULTY_WORKER = new URL('../fixtures/workers/faulty-worker.mjs', import.meta.url);

let sim: RunningSimulator;
let faults: string;
beforeAll(async () => {
  sim = await startSimulator({ streams: 6, sessions: 20, clock: 'manual', churn: false, seed: 3, shape: 'flat' });
  faults = mkdtempSync(join(tmpdir(), 'worker-faults-'));
  process.env.FLUSSONIC_TEST_WORKER_FAULTS = faults;
});
afterAll(async () => {
  delete process.env.FLUSSONIC_TEST_WORKER_FAULTS;
  rmSync(faults, { recursive: true, force: true });
  await sim?.close();
});

const running: PoolExporter[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
  for (const f of ['crash', 'block-ms', 'blocking']) rmSync(join(faults, f), { force: true });
});

function setup(): { exporter: PoolExporter; log: CapturedLog; metrics: () => Promise<string> } {
  const log = captureLogger();
  const exporter = poolExporter({
    config: exporterConfig([serverConfig('edge-1', sim.url), serverConfig('edge-2', sim.url)], { workers: 1 }),
    logger: log.logger,
    version: 'test',
    channels: threadChannels(FAULTY_WORKER, { logLevel: 'debug', userAgent: 'flussonic-exporter/test' }),
  });
  running.push(exporter);
  const metrics = async () => (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
  return { exporter, log, metrics };
}

const REQUESTS = 'flussonic_exporter_api_requests_total';
const streamsOk = (server: string) => ({ server, endpoint: '/streams', code: '200' });

describe('worker threads', () => {
  it('takes a crashed worker\'s targets down, logs the crash once, restarts it, and the counters go on', async () => {
    const { exporter, log, metrics } = setup();
    await exporter.pollOnce();
    let text = await metrics();
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-1' })).toHaveLength(6);
    const before = value(text, REQUESTS, streamsOk('edge-1'))!;
    expect(before).toBeGreaterThan(0);

    writeFileSync(join(faults, 'crash'), '');
    await exporter.pollOnce(); // ends when the worker dies
    text = await metrics();
    for (const server of ['edge-1', 'edge-2']) {
      expect(value(text, 'flussonic_up', { server })).toBe(0);
      expect(samples(text, 'flussonic_stream_alive', { server })).toHaveLength(0);
    }
    // The totals live on the main thread: nothing is lost with the thread.
    expect(value(text, REQUESTS, streamsOk('edge-1'))).toBeGreaterThanOrEqual(before);
    const crashes = log.entries().filter((e) => String(e.msg).startsWith('worker thread crashed'));
    expect(crashes).toHaveLength(1);
    expect(crashes[0]).toMatchObject({ level: 50, reason: 'uncaught error: injected fault', targets: 2 });
    const page = (await exporter.app.inject({ method: 'GET', url: '/' })).body;
    expect(page).toContain('worker thread crashed: uncaught error: injected fault');

    await exporter.pollOnce(); // waits for the restart, then polls
    text = await metrics();
    expect(log.entries().some((e) => e.msg === 'worker thread restarted')).toBe(true);
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-1' })).toHaveLength(6);
    expect(value(text, REQUESTS, streamsOk('edge-1'))!).toBeGreaterThan(before);
  });

  it('counts each restart of a crashed worker in flussonic_exporter_worker_restarts_total, from 0', async () => {
    const { exporter, metrics } = setup();
    await exporter.pollOnce();
    expect(value(await metrics(), 'flussonic_exporter_worker_restarts_total', {})).toBe(0);
    writeFileSync(join(faults, 'crash'), '');
    await exporter.pollOnce(); // ends when the worker dies
    // Crashed, not yet back: nothing restarted.
    expect(value(await metrics(), 'flussonic_exporter_worker_restarts_total', {})).toBe(0);
    await exporter.pollOnce(); // waits for the restart, then polls
    expect(value(await metrics(), 'flussonic_exporter_worker_restarts_total', {})).toBe(1);
  });

  it('polls an unchanged server of 5,000 sessions again and again, each poll scraped, without a crash', async () => {
    // Its sessions families do not change (manual clock), so the render memo sends them again
    // from its third render on; one deflates to more than zlib's 16 KiB output chunk.
    const big = await startSimulator({ streams: 1000, sessions: 5000, clock: 'manual', churn: false, seed: 1, shape: 'flat' });
    try {
      const log = captureLogger();
      const exporter = poolExporter({
        config: exporterConfig([serverConfig('edge-1', big.url)], { workers: 1 }),
        logger: log.logger,
        version: 'test',
        channels: threadChannels(FAULTY_WORKER, { logLevel: 'debug', userAgent: 'flussonic-exporter/test' }),
      });
      running.push(exporter);
      const scrape = async () => gunzipSync((await exporter.app.inject({ method: 'GET', url: '/metrics', headers: { 'accept-encoding': 'gzip' } })).rawPayload).toString('utf8');
      let first: string | undefined;
      for (let i = 0; i < 5; i++) {
        await exporter.pollOnce();
        const text = await scrape();
        expect(value(text, 'flussonic_up', { server: 'edge-1' }), `poll ${i + 1}`).toBe(1);
        const upstream = text.split('\n').filter((l) => /^flussonic_(stream|sessions)/.test(l)).join('\n');
        first ??= upstream;
        expect(upstream, `poll ${i + 1}`).toBe(first);
      }
      expect(samples(first!, 'flussonic_sessions_sent_bytes_total', { server: 'edge-1' }).length).toBeGreaterThan(1000);
      expect(log.entries().filter((e) => String(e.msg).startsWith('worker thread crashed'))).toEqual([]);
    } finally {
      await big.close();
    }
  }, 60_000);

  it('answers a scrape while the worker is busy with a long poll', async () => {
    const { exporter, metrics } = setup();
    await exporter.pollOnce();
    writeFileSync(join(faults, 'block-ms'), '2000');
    let pollDone = false;
    const poll = exporter.pollOnce().then(() => (pollDone = true));
    for (let i = 0; i < 500 && !existsSync(join(faults, 'blocking')); i++) await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(join(faults, 'blocking'))).toBe(true);
    const text = await metrics();
    // Served from the main thread's cache while the only worker is still blocked.
    expect(pollDone).toBe(false);
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-2' })).toHaveLength(6);
    await poll;
  });

  it('hands the buffers of replaced expositions to a worker thread, which goes on polling', async () => {
    const log = captureLogger();
    const cache = new ExpositionCache();
    const pool = new WorkerPool({
      size: 1,
      channels: threadChannels(FAULTY_WORKER, { logLevel: 'warn', userAgent: 'test' }),
      cache,
      self: new SelfMetrics({ version: 'test', defaultMetrics: false, demo: false }),
      log: log.logger,
      writeLog: () => undefined,
    });
    try {
      pool.apply(targetDescriptions(exporterConfig([serverConfig('edge-1', sim.url)])));
      await pool.pollOnce();
      const given = [new ArrayBuffer(1024), new ArrayBuffer(4096)];
      pool.free(given);
      // Transferred, not copied: nothing of them is left on this thread.
      expect(given.map((b) => b.byteLength)).toEqual([0, 0]);
      sim.advance(15_000);
      await pool.pollOnce();
      expect(samples(cache.current.text, 'flussonic_stream_alive', { server: 'edge-1' })).toHaveLength(6);
      expect(log.entries().filter((e) => (e.level as number) >= 50)).toEqual([]);
    } finally {
      await pool.stop(2000);
    }
  });

  it('runs no more worker threads than owned targets: started with the first, retired with the last', async () => {
    const log = captureLogger();
    const inner = threadChannels(FAULTY_WORKER, { logLevel: 'warn', userAgent: 'test' });
    let live = 0;
    const counted: typeof inner = (index, events) => {
      const channel = inner(index, events);
      live++;
      let ended = false;
      return {
        post: (m, t) => channel.post(m, t),
        terminate: async () => {
          if (!ended) live--;
          ended = true;
          await channel.terminate();
        },
      };
    };
    const size = 8;
    const pool = new WorkerPool({ size, channels: counted, cache: new ExpositionCache(), self: new SelfMetrics({ version: 'test', defaultMetrics: false, demo: false }), log: log.logger, writeLog: () => undefined });
    const names = ['edge-1', 'edge-2', 'edge-3', 'edge-4'];
    const slots = (list: string[]) => new Set(list.map((n) => ownerOf(`server/${n}`, size))).size;
    try {
      pool.apply(targetDescriptions(exporterConfig(names.map((n) => serverConfig(n, sim.url)))));
      await pool.pollOnce();
      expect(live).toBe(slots(names));
      expect(live).toBeLessThanOrEqual(names.length);
      // Discovery shrinks the set to one target: the others' threads end.
      pool.apply(targetDescriptions(exporterConfig([serverConfig('edge-1', sim.url)])));
      await pool.pollOnce();
      expect(live).toBe(1);
      expect(pool.running()).toBe(1);
      // And grows it again: threads start for the slots that own targets once more.
      pool.apply(targetDescriptions(exporterConfig(names.map((n) => serverConfig(n, sim.url)))));
      await pool.pollOnce();
      expect(live).toBe(slots(names));
      expect(log.entries().filter((e) => (e.level as number) >= 50)).toEqual([]);
    } finally {
      await pool.stop(2000);
    }
    expect(live).toBe(0);
  });

  it('assigns a target to a worker by a stable hash of its key', () => {
    expect(ownerOf('server/edge-1', 4)).toBe(ownerOf('server/edge-1', 4));
    const spread = new Set(Array.from({ length: 64 }, (_, i) => ownerOf(`server/edge-${i}`, 4)));
    expect(spread.size).toBe(4);
    // Pinned (fmix64 of FNV-1a 64 of the key): a change here moves targets between workers on upgrade.
    expect([ownerOf('server/edge-1', 4), ownerOf('catena/billing', 4), ownerOf('server/a', 7)]).toEqual([1, 0, 0]);
  });
});
