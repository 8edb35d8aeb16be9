/**
 * What the exporter keeps in memory between polls, measured as heap + ArrayBuffer deltas after a
 * full GC (run with --expose-gc: `npm run bench:memory`):
 *  - per open session: one sessions collector after polling N sessions, minus before;
 *  - per server: the exporter's worker pool and exposition cache polling K servers of 1,000 streams
 *    and 5,000 sessions (the same simulated world under K names), minus the same with one, its
 *    runtime on this thread (src/threads/in-process.ts) so that what the collectors keep is in
 *    this heap.
 * The simulator runs in this process with a manual clock, so its world is the same before and after
 * and only the exporter's state is in the delta. Never part of `npm test`.
 */
import pino from 'pino';
import { COLLECTORS } from '../src/collect/index.js';
import { createSessionsCollector } from '../src/collect/sessions.js';
import { validateConfig, type ServerConfig } from '../src/config/index.js';
import { FlussonicClient } from '../src/flussonic/client.js';
import { ExpositionCache } from '../src/serve/exposition.js';
import { SelfMetrics } from '../src/serve/self.js';
import { SeriesWriter } from '../src/render/series.js';
import { inProcessChannels } from '../src/threads/in-process.js';
import { WorkerPool } from '../src/threads/pool.js';
import { targetDescriptions } from '../src/threads/target-descriptions.js';
import { startSimulator } from '@flussonic-exporter/simulator';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:memory)');
const log = pino({ level: 'silent' });

function retainedMb(): { heap: number; buffers: number; rss: number } {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return { heap: m.heapUsed / 1048576, buffers: m.arrayBuffers / 1048576, rss: m.rss / 1048576 };
}

function servers(url: string, names: readonly string[]): ServerConfig[] {
  const raw = { servers: names.map((name) => ({ name, url, timeout: '60s', poll_interval: '120s' })) };
  return [...validateConfig(raw, { source: 'memory bench', baseDir: process.cwd() }).servers];
}

async function perSession(sessions: number): Promise<void> {
  const sim = await startSimulator({ streams: Math.max(100, sessions / 10), sessions, clock: 'manual', churn: false, seed: 5 });
  const config = servers(sim.url, ['edge-1'])[0]!;
  const self = new SelfMetrics({ version: 'bench', defaultMetrics: false });
  const client = new FlussonicClient({ config, stats: self.apiStats('edge-1') });
  const before = retainedMb();
  const collector = createSessionsCollector({ now: () => sim.now() });
  for (let i = 0; i < 2; i++) {
    const out = new SeriesWriter([['server', 'edge-1']], config.maxSeries);
    await collector.collect({ client, config, signal: AbortSignal.timeout(300_000), log, out });
    sim.advance(15_000);
  }
  const after = retainedMb();
  const bytes = ((after.heap + after.buffers - before.heap - before.buffers) * 1048576) / sessions;
  console.log(
    `sessions collector, ${sessions.toLocaleString('en')} open sessions (${collector.groupCount.toLocaleString('en')} groups): ` +
      `heap +${(after.heap - before.heap).toFixed(1)} MB, = ${bytes.toFixed(0)} bytes per open session`,
  );
  await client.destroy();
  await sim.close();
}

async function perServer(count: number): Promise<void> {
  const sim = await startSimulator({ streams: 1000, sessions: 5000, clock: 'manual', churn: false, seed: 6 });
  const names = Array.from({ length: count }, (_, i) => `edge-${i + 1}`);
  const measure = async (list: readonly string[]) => {
    const config = validateConfig({ servers: [{ name: 'placeholder', url: sim.url }] }, { source: 'memory bench', baseDir: '/' });
    // The runtime runs on this thread: a worker thread's heap would not show in this thread's
    // figures, and what a target keeps is the same either way.
    const cache = new ExpositionCache();
    const pool = new WorkerPool({
      size: 1,
      channels: inProcessChannels({ log, userAgent: 'flussonic-exporter/bench', collectorTable: COLLECTORS }),
      cache,
      self: new SelfMetrics({ version: 'bench', defaultMetrics: false }),
      log,
      writeLog: () => undefined,
    });
    pool.apply(targetDescriptions({ ...config, servers: servers(sim.url, list) }));
    await pool.pollOnce();
    sim.advance(15_000);
    await pool.pollOnce();
    const m = retainedMb();
    return { pool, m };
  };
  const base = await measure(names.slice(0, 1));
  const full = await measure(names);
  const heap = (full.m.heap - base.m.heap) / (count - 1);
  const buffers = (full.m.buffers - base.m.buffers) / (count - 1);
  const rss = (full.m.rss - base.m.rss) / (count - 1);
  console.log(
    `worker pool and exposition cache, ${count} vs 1 servers of 1,000 streams / 5,000 sessions (default settings): per additional server ` +
      `heap +${heap.toFixed(2)} MB, exposition buffers +${buffers.toFixed(2)} MB, together ${(heap + buffers).toFixed(2)} MB (RSS +${rss.toFixed(1)} MB)`,
  );
  await base.pool.stop(5000);
  await full.pool.stop(5000);
  await sim.close();
}

const args = new Set(process.argv.slice(2));
await perSession(args.has('--quick') ? 10_000 : 100_000);
await perServer(args.has('--quick') ? 4 : 20);
