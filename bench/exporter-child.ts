/**
 * The exporter side of the benchmark, in a process of its own (forked by bench/run.ts), so that
 * its CPU time and peak RSS are measured without the simulator's. Two roles:
 *  - collector: one collector with the production client, timed poll by poll, its samples rendered
 *    into an ExpositionCache as the poller does;
 *  - serve: the whole exporter (createExporter: every default collector, poller, fastify app)
 *    listening on loopback, polling back to back while the scrapers hit /metrics.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import pino from 'pino';
import { COLLECTORS } from '../src/collect/index.js';
import type { Collector } from '../src/collect/types.js';
import type { ServerConfig } from '../src/config/types.js';
import { createExporter, type Exporter } from '../src/exporter.js';
import type { ApiStats } from '../src/flussonic/api.js';
import { FlussonicClient } from '../src/flussonic/client.js';
import { CATALOGUE } from '../src/serve/catalogue.js';
import { ExpositionCache } from '../src/serve/exposition.js';
import { prepareTarget } from '../src/render/prepare.js';
import { finalPiece } from '../src/render/gzip-stream.js';
import { LoopCounter, serveConfig } from './serve.js';
import { SeriesWriter, type SampleSizes } from '../src/render/series.js';
import { answerRequests, cpuMs, maxRssMb, median, percentile } from './child-io.js';
import {
  benchServerConfig,
  type CollectorPoll,
  type ExporterRequest,
  type ExpositionFigures,
  type PollingSummary,
  type Watched,
} from './common.js';

const log = pino({ level: 'error' });

/** Time spent in garbage collection so far (ms), from the perf_hooks 'gc' entries. */
let gcMsTotal = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMsTotal += entry.duration;
}).observe({ entryTypes: ['gc'] });

/** Counts what the client reads, like the exporter's self-metrics do. */
class Tally implements ApiStats {
  requests = 0;
  bytes = 0;
  request(): void {
    this.requests++;
  }
  error(): void {}
  responseBytes(_endpoint: string, bytes: number): void {
    this.bytes += bytes;
  }
}

/**
 * BENCH_STEADY_PROFILE=<file>: a V8 CPU profile of the polls after the first one only (the first
 * poll of sessions meets every session as new, and JIT warm-up blurs a whole-process profile).
 */
const steadyProfile = process.env.BENCH_STEADY_PROFILE;
let profiler: Session | undefined;
let pollsDone = 0;

let single: { config: ServerConfig; client: FlussonicClient; collector: Collector; tally: Tally; sizes?: SampleSizes } | undefined;
let exporter: Exporter | undefined;
let loops: LoopCounter | undefined;
let polling: Promise<PollingSummary> | undefined;
let stopPolling = false;

async function pollCollector(): Promise<CollectorPoll> {
  const { config, client, collector, tally } = single!;
  // Made for the last run's samples, as the poller does (src/poll/poller.ts).
  const out = new SeriesWriter([['server', config.name]], config.maxSeries, single!.sizes);
  tally.requests = 0;
  tally.bytes = 0;
  const cpu0 = cpuMs();
  const gc0 = gcMsTotal;
  const t0 = performance.now();
  await collector.collect({ client, config, signal: AbortSignal.timeout(300_000), log, out });
  const wallMs = performance.now() - t0;
  const cpu = cpuMs() - cpu0;
  single!.sizes = out.sampleSizes();
  // GC entries are delivered asynchronously: let the observer catch up before reading.
  await new Promise((resolve) => setImmediate(resolve));
  const gcMs = gcMsTotal - gc0;

  const r0 = performance.now();
  const chunks = out.render();
  const renderMs = performance.now() - r0;
  const g0 = performance.now();
  const prepared = prepareTarget(chunks); // what a worker does after each poll
  const gzipMs = performance.now() - g0;
  const cache = new ExpositionCache();
  cache.swapPrepared(config.name, prepared);
  const snapshot = cache.snapshot();
  return {
    wallMs,
    cpuMs: cpu,
    gcMs,
    requests: tally.requests,
    bytes: tally.bytes,
    series: out.series,
    lines: countSampleLines(snapshot.text),
    dropped: out.dropped,
    problems: out.problemCount,
    renderMs,
    gzipMs,
    textBytes: snapshot.bytes,
    gzipBytes: Buffer.concat(snapshot.gzip(finalPiece(new Uint8Array(0)))).length,
    maxRssMb: maxRssMb(),
    heapUsedMb: process.memoryUsage().heapUsed / 1048576,
  };
}

function countSampleLines(text: string): number {
  let lines = 0;
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    if (end < 0) break;
    if (text.charCodeAt(start) !== 35 /* # */) lines++;
    start = end + 1;
  }
  return lines;
}

async function pollLoop(): Promise<PollingSummary> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const pollWallMs: number[] = [];
  while (!stopPolling) {
    const t0 = performance.now();
    await exporter!.pollOnce();
    pollWallMs.push(performance.now() - t0);
  }
  delay.disable();
  // With --expose-gc (BENCH_EXPORTER_FLAGS), the figures below are the live set, not live + garbage.
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  return {
    memoryMb: { rss: memory.rss / 1048576, heapTotal: memory.heapTotal / 1048576, heapUsed: memory.heapUsed / 1048576, external: memory.external / 1048576 },
    polls: pollWallMs.length,
    pollWallMs,
    maxRssMb: maxRssMb(),
    loopDelayMaxMs: delay.max / 1e6,
    loopDelayP99Ms: delay.percentile(99) / 1e6,
  };
}

/** Re-renders the served upstream exposition family by family, as a swap would, and times it. */
async function expositionFigures(): Promise<ExpositionFigures> {
  const res = await exporter!.app.inject({ method: 'GET', url: '/metrics' });
  const upstream = new Set(CATALOGUE.filter((f) => f.owner !== 'self').map((f) => f.name));
  // The served text, split back into the per-family chunks a poll hands to the cache.
  const bodies = new Map<string, string[]>();
  let family: string[] | undefined;
  let lines = 0;
  for (const line of res.body.split('\n')) {
    if (line.startsWith('# HELP ')) {
      const name = line.slice(7, line.indexOf(' ', 7));
      family = upstream.has(name) ? [] : undefined;
      if (family) bodies.set(name, family);
    } else if (family && line !== '' && !line.startsWith('#')) {
      family.push(line);
      lines++;
    }
  }
  const target = new Map([...bodies].map(([name, ls]) => [name, [Buffer.from(`${ls.join('\n')}\n`, 'utf8')]]));
  const renders: number[] = [];
  const gzips: number[] = [];
  let text = '';
  let gzipBytes = 0;
  for (let i = 0; i < 5; i++) {
    const cache = new ExpositionCache();
    const g0 = performance.now();
    const prepared = prepareTarget(target);
    gzips.push(performance.now() - g0);
    const t0 = performance.now();
    cache.swapPrepared('edge-1', prepared);
    const snapshot = cache.snapshot();
    renders.push(performance.now() - t0);
    text = snapshot.text;
    gzipBytes = Buffer.concat(snapshot.gzip(finalPiece(new Uint8Array(0)))).length;
  }
  return { lines, textBytes: Buffer.byteLength(text), gzipBytes, renderMs: median(renders), gzipMs: median(gzips) };
}

/** The process's CPU and RSS over `ms` of the poll loops running on their own schedule. */
async function watch(ms: number): Promise<Watched> {
  const polls0 = loops!.counts().polls;
  const c0 = cpuMs();
  let peak = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    peak = Math.max(peak, process.memoryUsage.rss());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const rss = process.memoryUsage.rss();
  return { cpuMs: cpuMs() - c0, peakRssMb: Math.max(peak, rss) / 1048576, endRssMb: rss / 1048576, polls: loops!.counts().polls - polls0 };
}

async function handle(message: ExporterRequest): Promise<unknown> {
  switch (message.type) {
    case 'init-collector': {
      const config = benchServerConfig(message.url, { [message.collector]: true });
      const tally = new Tally();
      const client = new FlussonicClient({ config, stats: tally, log, userAgent: 'flussonic-exporter/bench' });
      const entry = COLLECTORS.find((c) => c.name === message.collector);
      if (!entry) throw new Error(`no collector ${message.collector}`);
      single = { config, client, tally, collector: entry.create(config) };
      return { ok: true };
    }
    case 'poll': {
      if (steadyProfile && pollsDone === 1) {
        profiler = new Session();
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
      }
      pollsDone++;
      return pollCollector();
    }
    case 'init-serve': {
      loops = new LoopCounter();
      exporter = createExporter({ config: serveConfig(message), logger: loops.logger, version: 'bench' });
      await exporter.app.listen({ host: '127.0.0.1', port: 0 });
      const address = exporter.app.server.address();
      if (address === null || typeof address === 'string') throw new Error('exporter did not listen on a TCP port');
      return { port: address.port };
    }
    case 'poll-all': {
      const t0 = performance.now();
      await exporter!.pollOnce();
      return { wallMs: performance.now() - t0, maxRssMb: maxRssMb() };
    }
    case 'poll-cpu': {
      const cpu: number[] = [];
      const wall: number[] = [];
      for (let i = 0; i < message.rounds; i++) {
        const c0 = cpuMs(); // process.cpuUsage(): every thread of the process
        const t0 = performance.now();
        await exporter!.pollOnce();
        wall.push(performance.now() - t0);
        cpu.push(cpuMs() - c0);
      }
      (globalThis as { gc?: () => void }).gc?.();
      return { cpuMs: cpu, wallMs: wall, rssMb: process.memoryUsage().rss / 1048576, maxRssMb: maxRssMb() };
    }
    case 'start-loops':
      exporter!.start();
      return { ok: true };
    case 'loop-counts':
      return loops!.counts();
    case 'watch':
      return watch(message.ms);
    case 'start-polling':
      stopPolling = false;
      polling = pollLoop();
      return { ok: true };
    case 'stop-polling': {
      stopPolling = true;
      const summary = await polling!;
      return { ...summary, p50PollMs: percentile(summary.pollWallMs, 50) };
    }
    case 'exposition':
      return expositionFigures();
    case 'exit':
      if (profiler) {
        const { profile } = await profiler.post('Profiler.stop');
        writeFileSync(steadyProfile!, JSON.stringify(profile));
      }
      await single?.client.destroy();
      await exporter?.stop();
      await exporter?.app.close();
      setImmediate(() => process.exit(0));
      return { ok: true };
  }
}

answerRequests(handle);
