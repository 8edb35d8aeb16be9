/**
 * Shared pieces of the benchmark (`npm run bench`): the messages between the orchestrator
 * (bench/run.ts, which also hosts the simulator) and its child processes, the config the exporter
 * side runs with, and small statistics helpers. The exporter side and the baseline each run in a
 * child process of their own, so CPU time and peak RSS are theirs alone, not the simulator's.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validateConfig, type ServerConfig } from '../src/config/index.js';
import type { RequestRecord } from '@flussonic-exporter/simulator';
import { USER_AGENT_PRODUCT } from '../src/version.js';

export type CollectorUnderTest = 'streams' | 'sessions' | 'server' | 'dvrs';

/** A request the exporter made, among those the simulator logged (the baselines send no such user agent). */
export function isExporterRequest(record: RequestRecord): boolean {
  return record.headers['user-agent']?.startsWith(USER_AGENT_PRODUCT) === true;
}

/**
 * The server config of the exporter side, made by the config loader itself so that every default
 * is production's: only the timeouts (generous, for the largest scenarios) and a series cap high
 * enough to keep every series differ.
 */
export function benchServerConfig(url: string, collectors: Partial<Record<CollectorUnderTest, boolean>> = {}): ServerConfig {
  const raw = {
    servers: [
      {
        name: 'edge-1',
        url,
        timeout: '30s',
        poll_interval: '60s',
        max_series: 10_000_000,
        collectors: { streams: true, sessions: true, server: true, dvrs: false, ...collectors },
      },
    ],
  };
  return validateConfig(raw, { source: 'benchmark config', baseDir: process.cwd() }).servers[0]!;
}

// --- exporter child -----------------------------------------------------------------------------

export type ExporterRequest =
  | { readonly type: 'init-collector'; readonly url: string; readonly collector: CollectorUnderTest }
  | { readonly type: 'poll' }
  /**
   * The whole exporter: `servers` targets (default 1) all polling the simulator at `url`, every
   * `intervalMs` once started (default: the bench config's, with pollOnce driving the polls).
   */
  | { readonly type: 'init-serve'; readonly url: string; readonly servers?: number; readonly intervalMs?: number }
  | { readonly type: 'poll-all' }
  /** `rounds` polls of every target, back to back: the exporter process's CPU (all threads) per round. */
  | { readonly type: 'poll-cpu'; readonly rounds: number }
  /** Starts the poll loops on their own schedule (init-serve's intervalMs). */
  | { readonly type: 'start-loops' }
  /** What the loops did so far: polls ended, and those that failed (missed their deadline). */
  | { readonly type: 'loop-counts' }
  /** Watches the process for `ms` while the loops run: its CPU, and its RSS sampled every 100 ms. */
  | { readonly type: 'watch'; readonly ms: number }
  | { readonly type: 'start-polling' }
  | { readonly type: 'stop-polling' }
  | { readonly type: 'exposition' }
  | { readonly type: 'exit' };

/** What 'watch' saw. */
export interface Watched {
  readonly cpuMs: number;
  readonly peakRssMb: number;
  readonly endRssMb: number;
  readonly polls: number;
}

/** One poll of one collector as the exporter does it: client walk, mapping, samples, rendering. */
export interface CollectorPoll {
  readonly wallMs: number;
  readonly cpuMs: number;
  /** Garbage collection pauses during the poll (main thread), ms. */
  readonly gcMs: number;
  readonly requests: number;
  readonly bytes: number;
  readonly series: number;
  /** Sample lines (a histogram counts buckets + 3). */
  readonly lines: number;
  readonly dropped: number;
  readonly problems: number;
  /** SeriesWriter.render(): the rendered blocks per family. */
  readonly renderMs: number;
  /** prepareTarget(): blocks joined per family and deflated (level 1), as a worker does per poll. */
  readonly gzipMs: number;
  readonly textBytes: number;
  readonly gzipBytes: number;
  readonly maxRssMb: number;
  readonly heapUsedMb: number;
}

export interface PollCpu {
  /** Exporter process CPU (every thread) per round of polls, ms. */
  readonly cpuMs: readonly number[];
  readonly wallMs: readonly number[];
  /** RSS after the rounds (after a GC when --expose-gc), MB. */
  readonly rssMb: number;
  readonly maxRssMb: number;
}

export interface LoopCounts {
  readonly polls: number;
  readonly failed: number;
  /** Failures whose reason was the poll deadline (`timeout`). */
  readonly deadline: number;
}

export interface ServeReady {
  readonly port: number;
}

export interface PollingSummary {
  /** process.memoryUsage() when polling stopped, MB. */
  readonly memoryMb: { readonly rss: number; readonly heapTotal: number; readonly heapUsed: number; readonly external: number };
  readonly polls: number;
  readonly pollWallMs: readonly number[];
  readonly maxRssMb: number;
  /** Longest event-loop stall seen while polling (ms), from perf_hooks.monitorEventLoopDelay. */
  readonly loopDelayMaxMs: number;
  readonly loopDelayP99Ms: number;
}

export interface ExpositionFigures {
  readonly lines: number;
  readonly textBytes: number;
  readonly gzipBytes: number;
  /** Ordering the prepared exposition for a scrape (ExpositionCache.snapshot after a swap; median of 5). */
  readonly renderMs: number;
  /** prepareTarget() of it: join per family and deflate level 1 (median of 5), done by the worker. */
  readonly gzipMs: number;
}

// --- baseline child -------------------------------------------------------------------------------

export interface BaselineRequest {
  readonly type: 'walk';
  readonly url: string;
  /** `/sessions`, `/streams`, `/dvrs`, or `/config/stats` (a single document). */
  readonly path: string;
  readonly select?: readonly string[];
  readonly limit: number;
  /**
   * How the pages are fetched: `undici` (default), undici's Pool.request on keep-alive
   * connections, as the exporter itself fetches; `fetch`, Node's global fetch() and JSON.parse of
   * the body text, as a plain client of the API would (the whole-poll target's baseline).
   */
  readonly client?: 'undici' | 'fetch';
}

export interface BaselineWalk {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly gcMs: number;
  readonly requests: number;
  readonly bytes: number;
  readonly items: number;
}

// --- scraper child --------------------------------------------------------------------------------

export interface ScrapeRequest {
  readonly url: string;
  readonly concurrency: number;
  readonly maxRequests: number;
  readonly maxMs: number;
  readonly gzip: boolean;
  /**
   * Paced scrapers: each loop asks at most once per this many ms (from a random phase), like
   * Prometheus servers on a scrape interval. Without it the loops ask back to back, which
   * measures throughput: with 20 of them each waits for its share of the wire.
   */
  readonly everyMs?: number;
  /** Also answer every latency (latenciesMs), for percentiles over several windows. */
  readonly latencies?: boolean;
}

export interface ScrapeResult {
  readonly count: number;
  readonly errors: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly bytesPerScrape: number;
  readonly seconds: number;
  /** Every answer's latency, in the order they ended (when the request asked for them). */
  readonly latenciesMs?: readonly number[];
}

// --- helpers --------------------------------------------------------------------------------------

/** The MALLOC_* settings a text's non-comment lines set: `ENV A=1 \` and `Environment=A=1 B=2` alike. */
export function mallocSettings(text: string): Record<string, string> {
  const code = text.split('\n').filter((line) => !line.trimStart().startsWith('#')).join('\n');
  return Object.fromEntries([...code.matchAll(/\b(MALLOC_[A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

/** The MALLOC_* settings of a Dockerfile's final stage (the image that runs). */
export function imageMallocSettings(dockerfile: string): Record<string, string> {
  return mallocSettings(dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')));
}

let shipped: Readonly<Record<string, string>> | undefined;

/**
 * glibc's malloc settings the exporter ships with: the MALLOC_* variables the Dockerfile's final
 * stage sets (the systemd unit repeats them; test/deploy/systemd.test.ts holds the two together).
 * Every process the benchmark starts runs with them, so its memory figures are the shipped
 * exporter's. A MALLOC_* variable already in the environment wins; BENCH_MALLOC=default runs every
 * process with glibc's own defaults instead. Read once per run.
 */
export function shippedMallocEnv(): Readonly<Record<string, string>> {
  if (process.env.BENCH_MALLOC === 'default') return {};
  if (shipped) return shipped;
  const path = fileURLToPath(new URL('../../Dockerfile', import.meta.url));
  const settings = imageMallocSettings(readFileSync(path, 'utf8'));
  if (Object.keys(settings).length === 0) throw new Error(`${path}: no MALLOC_* setting in the final stage; run with BENCH_MALLOC=default to measure without`);
  return (shipped = settings);
}

/**
 * Node flags of every exporter process the benchmark starts (not of the baselines, the scrapers or
 * the simulator): BENCH_EXPORTER_FLAGS, e.g. "--trace-gc", or a V8 setting to compare with and
 * without. Every phase uses them: whole poll, serve, deadlines, fleet, instructions and steady.
 */
export function exporterNodeFlags(): string[] {
  return (process.env.BENCH_EXPORTER_FLAGS ?? '').split(' ').filter((f) => f !== '');
}

/**
 * Top-level settings of the cycle phase's command (bench/command.ts) beside its one server:
 * BENCH_EXPORTER_SETTINGS, YAML lines such as "workers: 0", to compare a setting with its default.
 */
export function exporterSettings(): string {
  const settings = (process.env.BENCH_EXPORTER_SETTINGS ?? '').trim();
  return settings === '' ? '' : `${settings}\n`;
}

/** The environment of every process the benchmark starts: this one's, with shippedMallocEnv() where it has none. */
export function childEnv(): NodeJS.ProcessEnv {
  return { ...shippedMallocEnv(), ...process.env };
}
