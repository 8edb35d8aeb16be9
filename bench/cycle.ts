/**
 * The cycle phase of `npm run bench`: what a user pays for the exporter, against the physical
 * floor of the same work, in one run.
 *
 * The real command (bench/command.ts: `node dist/main.js --config`, default settings but the one
 * server and its `poll_interval`) polls one simulated server (real clock, churn) on its own
 * schedule. A round is one whole poll interval, from 0.85 of an interval after one poll started to
 * 0.85 after the next: that poll, one gzip scrape at half the interval (Prometheus scrapes at a
 * fixed offset into its interval), and the idle time between. Its CPU is the process's (every
 * thread, bench/command.ts). The poll alone is read in a window of its own, from the round's start
 * to a quarter of the interval after the poll started, less the idle rate over that window: the
 * idle parts of a round (a collection of the memory reducer falls in some of them) then weigh less
 * in it than over the whole round. After each scrape, in a process of its own
 * (bench/replay-child.ts):
 *  - replay: the poll's exact requests (the simulator's log: paths, `limit`, `select`, cursors)
 *    with undici + JSON.parse, nothing else;
 *  - gzip: the exposition text the scrape received, gzip'd once as a whole at the exporter's level.
 * cycle / replay and cycle / (replay + gzip) are each round's own ratios; every figure is the
 * median of the rounds with their range, after warm-up rounds that are not counted.
 *
 * Also: idle (one server polled every 60 s, nobody scraping: CPU per second in windows between
 * polls) and polls nobody scraped: the same command unscraped (CPU per interval, to read beside the
 * scraped one), and under --cpu-prof (sampled time in node:zlib per poll).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { startSimulator, type RequestRecord, type RunningSimulator } from '@flussonic-exporter/simulator';
import { isExporterRequest } from './common.js';
import { median } from './child-io.js';
import { Child } from './child.js';
import { cpuBetween, readCpu, startCommand, type CpuReading, type RunningCommand } from './command.js';
import type { Gzipped, Replayed } from './replay-child.js';
import { zlibTime, type ZlibTime } from './zlib-profile.js';
import { GZIP_LEVEL } from '../src/render/gzip-stream.js';

export interface CycleScenario {
  readonly id: string;
  readonly shape: 'flat' | 'nested';
  readonly streams: number;
  readonly sessions: number;
  readonly intervalS: number;
  /** Rounds at least (short intervals: their CPU is small against the idle's noise, and rounds are cheap). */
  readonly minRounds: number;
  /**
   * Polls every warmIntervalMs, each scraped once when the scenario scrapes, between the
   * command's first REDUCER_SETTLE_MS at the scenario's own interval and that interval again
   * (config reloads, which keep the target): the JIT settles in polls, not seconds. At 1,000
   * streams every 10 s, V8 optimises about one more function per interval for minutes after start
   * (`--trace-opt`: 69 functions compiled 136 s after start, 103 at 379 s, with 12 and 13
   * deoptimisations in all: first compilations, not a loop), each a few ms of TurboFan on a helper
   * thread: rounds of a fresh process measure that, once per process, instead of what each poll
   * costs.
   */
  readonly warmPolls: number;
  /** The warm-up polls' interval (ms). */
  readonly warmIntervalMs: number;
  /**
   * Rounds not counted at the scenario's own interval at least (beside --cycle-warmup), for the
   * scenarios without warm-up polls. A poll of 10,000 streams and 100,000 sessions takes longer
   * than the deadline of a warm-up interval, so at that size the code warms in rounds of its own
   * interval instead. Polled every 8 s, V8 still compiled 55, 56, 44, 30 and 28 ms in the 3rd to
   * 7th intervals (`--trace-opt`), 17-18 ms in the 8th and 9th, against a cycle of about 300 ms:
   * the counted rounds begin after the 4th.
   */
  readonly warmRounds: number;
}

/**
 * With 30 polls every 500 ms TurboFan still compiled in the counted rounds: the cycle read 21.2
 * and 21.3 ms at flat-1k and 34.6 and 38.4 ms at nested-1k, against 18.4 and 17.7 ms and 26.0 and
 * 26.2 ms after 150 polls every 200 ms (two runs each way, taken in turn).
 */
export const WARM_POLLS = 150;
/**
 * The warm-up polls' interval: 200 ms at 1,000 streams, as measured above (a nested poll with its
 * scrape kept its deadline, half an interval this short, in 134 polls of 134), 100 ms below (a
 * poll of 100 streams takes a few ms: 1 deadline missed in 267 polls). With 150 ms for all the
 * default run took 597 s; this keeps it under ten minutes.
 */
const warmIntervalMs = (streams: number): number => (streams <= 100 ? 100 : 200);
/**
 * How long a warm-polled scenario's command first runs at its own interval, from its start. Each
 * thread's first mark-compact arms V8's memory reducer, which collects two or three times once
 * allocation has been low for 8 s: 8-10 s after the start (--trace-gc). Run after the warm-up
 * polls, when their pace ends, those collections threw away the optimised mapping code that held
 * the polls' dead objects (deopts "weak objects"), and V8 compiled it again in the counted rounds:
 * 53 and 25 ms of TurboFan in the 2nd and 3rd intervals at 1,000 streams, against 7 and 1 ms with
 * the reducer done before the warm-up (--trace-opt).
 */
export const REDUCER_SETTLE_MS = 11_000;
/** Rounds not counted of the scenarios of 10,000 streams (CycleScenario.warmRounds). */
export const WARM_ROUNDS_LARGE = 4;
/** Replays of the warm-up round's requests before its floor is measured (floorOf()). */
const REPLAY_WARM = WARM_POLLS;

const scenario = (shape: 'flat' | 'nested', streams: number, sessions: number, intervalS: number, minRounds = 0): CycleScenario => {
  const k = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n));
  const small = streams <= 1000;
  return { id: `${shape}-${k(streams)}${sessions > 0 ? `-${k(sessions)}` : ''}`, shape, streams, sessions, intervalS, minRounds, warmPolls: small ? WARM_POLLS : 0, warmIntervalMs: small ? warmIntervalMs(streams) : 0, warmRounds: small ? 0 : WARM_ROUNDS_LARGE };
};

/** The default run: the scenarios of the targets (about 8.5 minutes with idle and compression on a loaded 2-core machine). */
export const CYCLE_SCENARIOS: readonly CycleScenario[] = [
  scenario('flat', 100, 0, 5, 7),
  scenario('nested', 100, 0, 5, 7),
  scenario('flat', 1000, 0, 10),
  scenario('nested', 1000, 0, 10),
  scenario('flat', 10_000, 100_000, 8),
];
/** --cycle-long adds these and flat-1k unscraped (about 5 minutes more). */
export const CYCLE_LONG_SCENARIOS: readonly CycleScenario[] = [scenario('flat', 10_000, 0, 5), scenario('nested', 10_000, 0, 5), scenario('nested', 10_000, 100_000, 8)];

/** A figure over rounds: median and range. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export function spread(values: readonly number[]): Spread {
  return values.length === 0 ? { median: Number.NaN, min: Number.NaN, max: Number.NaN } : { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

export interface CycleRound {
  /** Exporter CPU over the round (every thread), ms, and where it was read (bench/command.ts). */
  readonly cpuMs: number;
  readonly cpuSource: 'schedstat' | 'stat';
  /** Of it, the scrape: CPU from asking to the body's end, and how long that took. */
  readonly scrapeMs: number;
  readonly scrapeWallMs: number;
  /** CPU per second from the scrape's end to the round's end (idle, the poll long over). */
  readonly idleMsPerS: number;
  /** CPU from the round's start to a quarter of the interval after its poll started, and how long that was. */
  readonly pollWindowMs: number;
  readonly pollWindowWallMs: number;
  /** How long the previous round's floor work went on into this round's poll (ms; it loads the same machine and simulator). */
  readonly floorOverlapMs: number;
  readonly wallMs: number;
  /** Polls that started in the round (/config/stats requests): 1, or the round does not count (-1: it ended late). */
  readonly polls: number;
  readonly replay?: Replayed;
  readonly gzip?: Gzipped;
  /** Bytes of the gzip scrape's body. */
  readonly scrapeBytes?: number;
}

export interface CycleFigures {
  readonly scenario: CycleScenario;
  readonly scraped: boolean;
  /** Rounds not counted after the first (after the scenario's warmPolls, if any). */
  readonly warmup: number;
  readonly rounds: readonly CycleRound[];
  readonly cpuMs: Spread;
  /** The poll alone: each round's CPU from its start to a quarter of the interval after its poll started, less the median idle rate over that window. */
  readonly pollMs: Spread;
  readonly scrapeMs: Spread;
  readonly idleMsPerS: Spread;
  readonly replayMs: Spread;
  readonly gzipMs: Spread;
  /** cycle / replay, each round's own. */
  readonly ratio: Spread;
  /** cycle / (replay + gzip), each round's own. */
  readonly floorRatio: Spread;
  readonly requests: number;
  readonly textBytes: number;
  readonly gzipBytes: number;
  readonly peakRssMb: number;
  readonly threads: number;
  /** Polls over the process's life (the first, before ready, included). */
  readonly polls: number;
  /** With --cpu-prof (the unscraped run): sampled time in node:zlib. */
  readonly zlib?: ZlibTime;
  /** accept-encoding values of the exporter's requests that ask for compressed responses (then zlib time includes inflating them). */
  readonly compressedResponses: readonly string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The gzip level the exporter deflates at, or `--gzip-level=N`'s. */
export function exporterGzipLevel(flag: string | undefined): number {
  return flag === undefined ? GZIP_LEVEL : Number(flag);
}

/** Polls among a round's requests: one /config/stats each. */
const pollsIn = (records: readonly RequestRecord[]) => records.filter((r) => r.apiPath === '/config/stats').length;

/** The path and query of a logged request, as it is sent again (commas of `select` kept). */
export function pathOf(r: RequestRecord): string {
  const query = new URLSearchParams(r.query).toString().replace(/%2C/g, ',');
  return query === '' ? r.path : `${r.path}?${query}`;
}

/** When the exporter's next poll started (its first request's arrival, on this process's performance.now() clock). */
async function waitForPoll(sim: RunningSimulator, timeoutMs: number): Promise<number> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    const first = sim.requests.entries().find(isExporterRequest);
    // A real clock's simulated time is the wall clock's.
    if (first) return performance.now() - Math.max(0, sim.now() - first.time);
    await sleep(5);
  }
  throw new Error(`no poll within ${Math.round(timeoutMs / 1000)} s`);
}

/**
 * Waits until the exporter made `count` polls more; how many it made (the simulator's log is
 * cleared as they are counted). With `scrape`, the exposition is scraped once after each look that
 * found new polls (every 100 ms, so about once a poll at the warm-up intervals), as Prometheus
 * would have scraped them: the serving and rendering code is then as warm as the polling code.
 */
export async function waitForPolls(sim: RunningSimulator, count: number, timeoutMs: number, scrape?: () => Promise<unknown>): Promise<number> {
  const until = performance.now() + timeoutMs;
  let seen = 0;
  while (seen < count) {
    if (performance.now() > until) throw new Error(`${seen} of ${count} warm-up polls within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(100);
    const polls = pollsIn(sim.requests.entries().filter(isExporterRequest));
    sim.requests.clear();
    seen += polls;
    if (polls > 0 && scrape) await scrape();
  }
  return seen;
}

/** One gzip scrape of the command's /metrics (an error unless HTTP 200): the body as sent, and its text. */
async function scrapeOnce(url: string): Promise<{ body: Buffer; text: Buffer }> {
  const r = await request(`${url}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
  const body = Buffer.from(await r.body.arrayBuffer());
  if (r.statusCode !== 200) throw new Error(`scrape: HTTP ${r.statusCode}`);
  return { body, text: r.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body };
}

export interface CycleOptions {
  readonly rounds: number;
  readonly warmup: number;
  readonly gzipLevel: number;
  /** One gzip scrape per round (false: nobody scrapes, and no replay is made). */
  readonly scrape: boolean;
  /** Node flags of the command beside BENCH_EXPORTER_FLAGS (--cpu-prof...). */
  readonly nodeFlags?: readonly string[];
  /** Where --cpu-prof writes: read for compression time once the command exited. */
  readonly profileDir?: string;
}

/**
 * The floor of one round: its poll's requests replayed, then the served text gzip'd once. With
 * `warm`, the requests are replayed that many times before (in the warm-up round after the
 * command's warm-up polls): the replaying process has then compiled its code as the command has,
 * and the first counted rounds do not measure its JIT.
 */
async function floorOf(floor: Child, origin: string, records: readonly RequestRecord[], text: Buffer, file: string, level: number, warm: number): Promise<{ replay: Replayed; gzip: Gzipped }> {
  const paths = records.map(pathOf);
  for (let i = 0; i < warm; i++) await floor.request<Replayed>({ type: 'replay', origin, paths });
  const replay = await floor.request<Replayed>({ type: 'replay', origin, paths });
  writeFileSync(file, text);
  const gzip = await floor.request<Gzipped>({ type: 'gzip', file, level });
  return { replay, gzip };
}

/** Rounds of one scenario on a simulator of its own. */
export async function runCycle(s: CycleScenario, options: CycleOptions): Promise<CycleFigures> {
  const sim = await startSimulator({ clock: 'real', churn: true, seed: 1, shape: s.shape, streams: s.streams, sessions: s.sessions, gpus: 2, dvrs: 3 });
  const floor = await Child.start('replay-child.js');
  const dir = mkdtempSync(join(tmpdir(), 'flussonic-exporter-cycle-text-'));
  let command: RunningCommand | undefined;
  try {
    const intervalMs = s.intervalS * 1000;
    const started = performance.now();
    command = await startCommand(sim.url, intervalMs, options.nodeFlags);
    // Warmed by polls at a short interval after the memory reducer ran: the rounds count from the
    // second poll after the reload (the first ends before the first round starts).
    const warmup = s.warmPolls > 0 ? 0 : Math.max(options.warmup, s.warmRounds);
    if (s.warmPolls > 0) {
      await sleep(started + REDUCER_SETTLE_MS - performance.now());
      command.setPollInterval(s.warmIntervalMs);
    }
    let polls = pollsIn(sim.requests.entries().filter(isExporterRequest));
    sim.requests.clear();
    if (s.warmPolls > 0) {
      const url = command.url;
      polls += await waitForPolls(sim, s.warmPolls, s.warmPolls * s.warmIntervalMs * 4 + 30_000, options.scrape ? () => scrapeOnce(url) : undefined);
      command.setPollInterval(intervalMs);
      sim.requests.clear();
    }
    const rounds: CycleRound[] = [];
    const encodings = new Set<string>();
    let boundary: CpuReading | undefined;
    let boundaryAt = 0;
    let floorEnded = 0;
    const measured = Math.max(options.rounds, s.minRounds);
    for (let i = 0; i <= warmup + measured; i++) {
      const started = await waitForPoll(sim, 2 * intervalMs + 30_000);
      const overlapMs = Math.max(0, floorEnded - started);
      await sleep(started + intervalMs / 4 - performance.now());
      const afterPoll = { cpu: readCpu(command.pid), at: performance.now() };
      await sleep(started + intervalMs / 2 - performance.now());
      let text: Buffer | undefined;
      let scrapeBytes: number | undefined;
      const beforeScrape = { cpu: readCpu(command.pid), at: performance.now() };
      let afterScrape = beforeScrape;
      if (options.scrape) {
        const scraped = await scrapeOnce(command.url);
        afterScrape = { cpu: readCpu(command.pid), at: performance.now() };
        scrapeBytes = scraped.body.length;
        text = scraped.text;
      }
      // The floor of every round, counted or not (both sides warm up alike), while the exporter
      // idles: the poll's requests as logged so far (the round's end checks that none came after).
      const replayed = sim.requests.entries().filter(isExporterRequest);
      const floorWork = text ? floorOf(floor, sim.url, replayed, text, join(dir, 'exposition.txt'), options.gzipLevel, i === 0 && s.warmPolls > 0 ? REPLAY_WARM : 0) : Promise.resolve(undefined);
      await sleep(started + 0.85 * intervalMs - performance.now());
      const reading = readCpu(command.pid);
      const at = performance.now();
      // Read late (the previous floor's work ran into this round): the round is not counted.
      const late = at > started + 0.95 * intervalMs;
      const logged = sim.requests.entries().filter(isExporterRequest);
      const roundPolls = pollsIn(logged);
      for (const r of logged) if (/gzip|deflate|br|zstd/i.test(r.headers['accept-encoding'] ?? '')) encodings.add(r.headers['accept-encoding']!);
      polls += roundPolls;
      sim.requests.clear();
      const { replay, gzip } = (await floorWork) ?? {};
      floorEnded = performance.now();
      const incomplete = text !== undefined && logged.length !== replayed.length;
      if (boundary && i > warmup) {
        const cpu = cpuBetween(boundary, reading);
        // The scrape, and the rate from its end to the round's end (idle: the poll long over).
        const idleRate = cpuBetween(afterScrape.cpu, reading).ms / (at - afterScrape.at);
        const scrapeMs = cpuBetween(beforeScrape.cpu, afterScrape.cpu).ms;
        const pollWindow = cpuBetween(boundary, afterPoll.cpu).ms;
        rounds.push({ cpuMs: cpu.ms, cpuSource: cpu.source, scrapeMs, pollWindowMs: pollWindow, pollWindowWallMs: afterPoll.at - boundaryAt, scrapeWallMs: afterScrape.at - beforeScrape.at, idleMsPerS: idleRate * 1000, floorOverlapMs: overlapMs, wallMs: at - boundaryAt, polls: late || incomplete ? -1 : roundPolls, ...(replay ? { replay } : {}), ...(gzip ? { gzip } : {}), ...(scrapeBytes !== undefined ? { scrapeBytes } : {}) });
        if (late) console.log(`  ${s.id}: a round ended ${Math.round(at - started - 0.85 * intervalMs)} ms late (the floor's work before it ran long), not counted`);
        else if (incomplete) console.log(`  ${s.id}: the poll went on past the scrape (${logged.length - replayed.length} requests after it), the round not counted`);
        else if (roundPolls !== 1) console.log(`  ${s.id}: a round of ${roundPolls} polls, not counted`);
      }
      boundary = reading;
      boundaryAt = at;
    }
    const peakRssMb = command.peakRssMb();
    const threads = command.threads();
    await command.stop();
    const counted = rounds.filter((r) => r.polls === 1);
    // The poll alone: its window's CPU less the idle rate (the median of the rounds', which a
    // garbage collection in one round's idle part does not move) over the window.
    const idleRate = median(counted.map((r) => r.idleMsPerS)) / 1000;
    const pollMs = counted.map((r) => r.pollWindowMs - idleRate * r.pollWindowWallMs);
    const ratios = (withGzip: boolean) => counted.filter((r) => r.replay && r.gzip).map((r) => r.cpuMs / (r.replay!.cpuMs + (withGzip ? r.gzip!.cpuMs : 0)));
    const last = counted.findLast((r) => r.gzip);
    return {
      scenario: s,
      scraped: options.scrape,
      warmup,
      rounds,
      cpuMs: spread(counted.map((r) => r.cpuMs)),
      pollMs: spread(pollMs),
      scrapeMs: spread(counted.map((r) => r.scrapeMs)),
      idleMsPerS: spread(counted.map((r) => r.idleMsPerS)),
      replayMs: spread(counted.flatMap((r) => (r.replay ? [r.replay.cpuMs] : []))),
      gzipMs: spread(counted.flatMap((r) => (r.gzip ? [r.gzip.cpuMs] : []))),
      ratio: spread(ratios(false)),
      floorRatio: spread(ratios(true)),
      requests: median(counted.flatMap((r) => (r.replay ? [r.replay.requests] : []))),
      textBytes: last?.gzip?.textBytes ?? Number.NaN,
      gzipBytes: last?.scrapeBytes ?? Number.NaN,
      peakRssMb,
      threads,
      polls,
      compressedResponses: [...encodings],
      ...(options.profileDir ? { zlib: zlibTime(options.profileDir) } : {}),
    };
  } finally {
    await command?.stop();
    await floor.stop();
    rmSync(dir, { recursive: true, force: true });
    await sim.close();
  }
}

export interface IdleFigures {
  readonly intervalS: number;
  readonly windowS: number;
  /** CPU ms per second in each window between polls. */
  readonly windows: readonly number[];
  readonly msPerSecond: Spread;
  /** Windows left out: a poll fell in them or just before. */
  readonly skipped: number;
  readonly threads: number;
}

/**
 * One 1,000-stream server polled every 60 s, nobody scraping: after the first poll, windows of
 * `windowS` seconds; a window a poll fell in, and the next one (the poll's garbage), are left out.
 */
export async function runIdle(windows: number, windowS: number): Promise<IdleFigures> {
  const intervalS = 60;
  const sim = await startSimulator({ clock: 'real', churn: true, seed: 1, shape: 'flat', streams: 1000, sessions: 0, gpus: 2, dvrs: 3 });
  let command: RunningCommand | undefined;
  try {
    command = await startCommand(sim.url, intervalS * 1000);
    await sleep(2000);
    sim.requests.clear();
    const rates: number[] = [];
    let skipped = 0;
    let settle = false;
    for (let tries = 0; rates.length < windows && tries < windows + 6; tries++) {
      const before = readCpu(command.pid);
      const t0 = performance.now();
      await sleep(windowS * 1000);
      const after = readCpu(command.pid);
      const seconds = (performance.now() - t0) / 1000;
      const polled = sim.requests.entries().some(isExporterRequest);
      sim.requests.clear();
      if (polled || settle) {
        skipped++;
        settle = polled;
        continue;
      }
      rates.push(cpuBetween(before, after).ms / seconds);
    }
    return { intervalS, windowS, windows: rates, msPerSecond: spread(rates), skipped, threads: command.threads() };
  } finally {
    await command?.stop();
    await sim.close();
  }
}

/** A scenario nobody scrapes; with `profile`, under --cpu-prof (profiles in a directory of its own) for the compression time. */
export async function runUnscraped(s: CycleScenario, rounds: number, warmup: number, gzipLevel: number, profile: boolean): Promise<CycleFigures> {
  if (!profile) return runCycle(s, { rounds, warmup, gzipLevel, scrape: false });
  const profileDir = mkdtempSync(join(tmpdir(), 'flussonic-exporter-cycle-prof-'));
  try {
    return await runCycle(s, { rounds, warmup, gzipLevel, scrape: false, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`], profileDir });
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
  }
}
