/**
 * The operations collector at scale: a first poll that reads a large history, an incremental
 * poll, and the state file with many open subscriptions. Not part of npm test. Run:
 *   npx tsc -p tsconfig.json --outDir .tmp/bench && node .tmp/bench/bench/catena.js [operations]
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { OperationsCollector } from '../src/collect/operations.js';
import type { CatenaConfig } from '../src/config/types.js';
import type { ApiStats } from '../src/flussonic/api.js';
import { SeriesWriter } from '../src/render/series.js';
import { startSimulator } from '@flussonic-exporter/simulator';

const DAY = 86_400_000;
const KEY = 'bench-key-0123456789';
const total = Number(process.argv[2] ?? 100_000);

const stats: ApiStats = { request() {}, error() {}, responseBytes() {} };

async function main(): Promise<void> {
  const sim = await startSimulator({ clock: 'manual', streams: 0, sessions: 0, catenaHistory: false, churn: false, catenaKeys: [{ key: KEY, portal: 'p' }] });
  const dir = await mkdtemp(join(tmpdir(), 'catena-bench-'));
  try {
    const start = sim.now();
    // Subscriptions opened over 10 days, one subscriber each; two in three are cancelled, the rest stay open.
    const from = start - 10 * DAY;
    let n = 0;
    for (let i = 0; n < total; i++) {
      const t = from + Math.floor((i * 10 * DAY) / total);
      const subscriberId = `s${i}`;
      const packageId = `k${i % 20}`;
      sim.world.catena.add({ type: 'createPackageSubscriber', portalId: 'p', subscriberId, packageId, createdAt: t, payload: { subscriberId, packageId, packageName: `Package ${i % 20}` } });
      n++;
      if (i % 3 !== 0 && n < total) {
        sim.world.catena.add({ type: 'deletePackageSubscriber', portalId: 'p', subscriberId, packageId, createdAt: t + 1, payload: { subscriberId, packageId } });
        n++;
      }
    }
    const config: CatenaConfig = {
      name: 'bench',
      url: sim.url,
      apiKey: KEY,
      pollIntervalMs: 60_000,
      timeoutMs: 30_000,
      pageSize: 500,
      maxPages: 100_000,
      maxResponseBytes: 64 * 1024 * 1024,
      maxClockSkewMs: 5 * 60_000,
      start: { kind: 'history', ms: 11 * DAY },
      stateFile: join(dir, 'state.json'),
      query: { type: 'type', createdFrom: 'createdAt_gte', createdBefore: 'createdAt_lt', subscriber: 'subscriberId' },
      prices: new Map([['k1', { amount: 9.99, perMs: 30 * DAY, currency: 'EUR' }]]),
    };
    const logger = pino({ level: 'warn' });
    const poll = async (collector: OperationsCollector) => {
      const out = new SeriesWriter([['catena', 'bench']]);
      const t0 = performance.now();
      await collector.collect({ signal: AbortSignal.timeout(600_000), log: logger, out });
      return { ms: performance.now() - t0, series: out.series };
    };

    // The simulator's own share: the same walk with fetch, no collector.
    const tw = performance.now();
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams({ createdAt_gte: new Date(start - 11 * DAY).toISOString(), limit: '500', ...(cursor ? { cursor } : {}) });
      const res = await fetch(`${sim.url}/tv-management/api/v1/operations?${q}`, { headers: { 'x-auth-token': KEY } });
      cursor = ((await res.json()) as { next: string | null }).next;
    } while (cursor);
    console.log(`the same pages fetched and parsed without the collector: ${(performance.now() - tw).toFixed(0)} ms`);

    global.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const collector = new OperationsCollector(config, { logger, stats, now: () => sim.now() });
    const first = await poll(collector);
    global.gc?.();
    const heap1 = process.memoryUsage().heapUsed;
    const size = (await stat(config.stateFile!)).size;
    console.log(`first poll, ${total} operations (${Math.ceil(total / 500)} pages of 500): ${first.ms.toFixed(0)} ms, ${((total / first.ms) * 1000).toFixed(0)} operations/s, ${first.series} series`);
    console.log(`retained heap after it: ${((heap1 - heap0) / 1048576).toFixed(1)} MiB${global.gc ? '' : ' (run with --expose-gc for a clean figure)'}; state file ${(size / 1024).toFixed(0)} KiB`);

    for (let i = 0; i < 1000; i++) sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: `n${i}`, createdAt: start + 1 + i });
    sim.advance(60_000);
    const next = await poll(collector);
    console.log(`incremental poll, 1000 new operations: ${next.ms.toFixed(0)} ms (state file written included)`);
    const idle = await poll(collector);
    console.log(`poll with nothing new: ${idle.ms.toFixed(1)} ms`);
    await collector.close();

    const restarted = new OperationsCollector(config, { logger, stats, now: () => sim.now() });
    const restore = await poll(restarted);
    console.log(`restart: restore from the state file + poll with nothing new: ${restore.ms.toFixed(0)} ms`);
    await restarted.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
    await sim.close();
  }
}

await main();
