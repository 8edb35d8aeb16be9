/**
 * The cycle phase as bench/run.ts runs it (bench/cycle.ts: scenarios, idle, compression unscraped)
 * and the table of "lean at every size": each figure with its target beside it.
 */
import type { FleetFigures } from './threads.js';
import { CYCLE_LONG_SCENARIOS, CYCLE_SCENARIOS, runCycle, runIdle, runUnscraped, REDUCER_SETTLE_MS, WARM_POLLS, WARM_ROUNDS_LARGE, type CycleFigures, type CycleScenario, type IdleFigures, type Spread } from './cycle.js';
import { f0, f1, f2, mb, table } from './format.js';

export interface CyclePhaseOptions {
  /** --cycle=<id>[,...]: just these scenarios (and idle, unscraped, compression when named); run.ts checks the ids against cycleScenarioIds(). */
  readonly only?: readonly string[];
  /** --cycle-long: the long scenarios too, and flat-1k unscraped. */
  readonly long: boolean;
  readonly rounds: number;
  readonly warmup: number;
  readonly gzipLevel: number;
  readonly quick: boolean;
}

export interface CyclePhase {
  readonly gzipLevel: number;
  readonly scenarios: readonly CycleFigures[];
  readonly idle?: IdleFigures;
  /** flat-1k at 10 s, nobody scraping. */
  readonly unscraped?: CycleFigures;
  /** flat-1k at 5 s, nobody scraping, under --cpu-prof: compression time per poll. */
  readonly compression?: CycleFigures;
}

/** The scenario of the small-server figures: peak RSS, and compression unscraped. */
const SMALL = 'flat-1k';

export function cycleScenarioIds(): string[] {
  return [...CYCLE_SCENARIOS, ...CYCLE_LONG_SCENARIOS].map((s) => s.id).concat('idle', 'unscraped', 'compression');
}

export async function runCyclePhase(o: CyclePhaseOptions): Promise<CyclePhase> {
  const all = [...CYCLE_SCENARIOS, ...CYCLE_LONG_SCENARIOS];
  const wanted = (id: string) => (o.only ? o.only.includes(id) : true);
  let chosen: readonly CycleScenario[] = o.only ? all.filter((s) => wanted(s.id)) : o.long ? all : CYCLE_SCENARIOS;
  if (o.quick && !o.only) chosen = CYCLE_SCENARIOS.slice(0, 1);
  console.log(
    `\n=== cycle: the command (default settings: collectors streams, sessions, server) polling one server, one gzip scrape per poll; ` +
      `${o.rounds} rounds of one interval (at 100 streams ${Math.max(o.rounds, ...CYCLE_SCENARIOS.map((s) => s.minRounds))}) after ${o.warmup} not counted (up to 1,000 streams: after ${REDUCER_SETTLE_MS / 1000} s at their interval and ${WARM_POLLS} polls every ${warmIntervals()}, each scraped once, none; at 10,000 streams at least ${WARM_ROUNDS_LARGE}); ` +
      `floor = replay (undici + JSON.parse) + gzip level ${o.gzipLevel} of the exposition ===`,
  );
  const scenarios: CycleFigures[] = [];
  for (const s of chosen) {
    const t0 = performance.now();
    const c = await runCycle(o.quick ? { ...s, minRounds: 0, warmRounds: 0, warmPolls: Math.min(s.warmPolls, 3) } : s, { rounds: o.rounds, warmup: o.warmup, gzipLevel: o.gzipLevel, scrape: true });
    scenarios.push(c);
    printCycle(c, (performance.now() - t0) / 1000);
  }
  let idle: IdleFigures | undefined;
  if (wanted('idle')) {
    idle = await runIdle(o.quick ? 3 : 10, 5);
    const m = idle.msPerSecond;
    console.log(
      `idle: one 1,000-stream server polled every ${idle.intervalS} s, nobody scraping: ${f2(m.median)} ms CPU per second (${f2(m.min)}-${f2(m.max)}) over ${idle.windows.length} windows of ${idle.windowS} s ` +
        `between polls (${idle.skipped} left out around a poll); ${idle.threads} threads`,
    );
  }
  const small = all.find((c) => c.id === SMALL)!;
  let unscraped: CycleFigures | undefined;
  // Beside the scraped flat-1k: what a scrape adds (with --cycle-long or --cycle=unscraped).
  if (o.only ? wanted('unscraped') : o.long) {
    unscraped = await runUnscraped(o.quick ? { ...small, intervalS: 5 } : small, o.rounds, o.warmup, o.gzipLevel, false);
    const scraped = scenarios.find((c) => c.scenario.id === SMALL);
    const u = unscraped.cpuMs;
    console.log(
      `unscraped: ${SMALL} every ${unscraped.scenario.intervalS} s, nobody scraping: CPU per interval ${range(u, f1)} ms` +
        (scraped && !o.quick ? `; with one gzip scrape per interval (above) ${range(scraped.cpuMs, f1)} ms: a scrape costs ${f1(scraped.cpuMs.median - u.median)} ms (medians)` : ''),
    );
  }
  let compression: CycleFigures | undefined;
  if (wanted('compression')) {
    // Its figure is a sum over every poll of the process; the profiler's own cost makes its CPU per interval no reading.
    compression = await runUnscraped({ ...small, intervalS: 5, warmPolls: 0 }, Math.min(3, o.rounds), Math.min(1, o.warmup), o.gzipLevel, true);
    const z = compression.zlib!;
    console.log(
      `compression in polls nobody scraped: ${SMALL} every 5 s under --cpu-prof: ${f2(z.ms / compression.polls)} ms per poll ` +
        `(${f1(z.ms)} ms sampled in node:zlib over ${compression.polls} polls, ${z.profiles} thread profiles)`,
    );
    if (compression.compressedResponses.length > 0) console.log(`  (that includes inflating upstream responses: the exporter asked for accept-encoding ${compression.compressedResponses.join(', ')})`);
  }
  return { gzipLevel: o.gzipLevel, scenarios, ...(idle ? { idle } : {}), ...(unscraped ? { unscraped } : {}), ...(compression ? { compression } : {}) };
}

const range = (s: Spread, f: (n: number) => string) => (s.min === s.max ? f(s.median) : `${f(s.median)} (${f(s.min)}-${f(s.max)})`);

function printCycle(c: CycleFigures, seconds: number): void {
  const s = c.scenario;
  const sources = new Set(c.rounds.map((r) => r.cpuSource));
  console.log(
    `${s.id}: ${f0(s.streams)} streams, ${f0(s.sessions)} sessions, every ${s.intervalS} s: cycle ${range(c.cpuMs, f1)} ms ` +
      `(poll ${range(c.pollMs, f1)}, scrape ${range(c.scrapeMs, f1)}, idle ${range(c.idleMsPerS, f1)} ms/s), replay ${range(c.replayMs, f1)} ms (${f0(c.requests)} requests), ` +
      `gzip ${range(c.gzipMs, f1)} ms of ${mb(c.textBytes)} MB (${mb(c.gzipBytes)} MB served); cycle/replay ${range(c.ratio, f2)}, cycle/(replay+gzip) ${range(c.floorRatio, f2)}; ` +
      `peak RSS ${f0(c.peakRssMb)} MB, ${c.threads} threads (CPU from ${[...sources].join('+')}; ${f0(seconds)} s)`,
  );
}

export interface LeanRow {
  readonly figure: string;
  readonly value: string;
  /** The median the target is read on (NaN: not measured in this run). */
  readonly median: number;
  readonly target: string;
  readonly met: boolean | undefined;
}

/** The rows, from what this run measured (rows of phases that did not run say so). */
export function leanRows(phase: CyclePhase | undefined, fleet: FleetFigures | undefined): LeanRow[] {
  const rows: LeanRow[] = [];
  const at = (id: string) => phase?.scenarios.find((c) => c.scenario.id === id);
  const row = (figure: string, s: Spread | undefined, f: (n: number) => string, target: string, ok?: (n: number) => boolean) =>
    rows.push({ figure, value: s ? range(s, f) : 'not run', median: s?.median ?? Number.NaN, target, met: ok && s && !Number.isNaN(s.median) ? ok(s.median) : undefined });
  row('idle CPU ms/s, one server, 60 s polls, nobody scraping', phase?.idle?.msPerSecond, f2, '<= 1', (n) => n <= 1);
  for (const id of ['flat-100', 'nested-100']) row(`CPU ms per poll, ${id} (the poll's window, idle rate subtracted)`, at(id)?.pollMs, f1, '<= 10', (n) => n <= 10);
  for (const id of ['flat-100', 'nested-100']) row(`  CPU ms per ${at(id)?.scenario.intervalS ?? 5} s interval, ${id} (poll, 1 scrape, idle)`, at(id)?.cpuMs, f1, '-');
  for (const id of ['flat-1k', 'nested-1k']) row(`cycle / replay, ${id}, 10 s polls`, at(id)?.ratio, f2, '<= 2.0', (n) => n <= 2);
  for (const id of ['flat-10k-100k', 'nested-10k-100k']) if (id === 'flat-10k-100k' || at(id)) row(`cycle / replay, ${id}, 8 s polls`, at(id)?.ratio, f2, '<= 2.0', (n) => n <= 2);
  for (const id of ['flat-1k', 'nested-1k', 'flat-10k-100k', 'nested-10k-100k']) if (id !== 'nested-10k-100k' || at(id)) row(`cycle / (replay + gzip), ${id}`, at(id)?.floorRatio, f2, '<= 1.3', (n) => n <= 1.3);
  const u = phase?.compression;
  const zlibPerPoll = u?.zlib ? u.zlib.ms / Math.max(1, u.polls) : undefined;
  row('compression ms in a poll nobody scraped (flat-1k, profiled)', zlibPerPoll === undefined ? undefined : { median: zlibPerPoll, min: zlibPerPoll, max: zlibPerPoll }, f2, '0', (n) => n === 0);
  const rss = at(SMALL)?.peakRssMb;
  row(`peak RSS MB, one 1,000-stream server (${SMALL}, default settings)`, rss === undefined ? undefined : { median: rss, min: rss, max: rss }, f0, '<= 70', (n) => n <= 70);
  const perCore = fleet?.serversPerCoreScheduled;
  row('1,000-stream servers per core at 15 s, on their schedules', perCore === undefined ? undefined : { median: perCore, min: perCore, max: perCore }, f0, '>= 450', (n) => n >= 450);
  const perServer = fleet?.mbPerServerScheduled;
  row('MB per extra 1,000-stream server, on their schedules', perServer === undefined ? undefined : { median: perServer, min: perServer, max: perServer }, f2, '<= 1.5', (n) => n <= 1.5);
  return rows;
}

export function printLean(rows: readonly LeanRow[]): void {
  console.log('\n=== lean at every size (medians, range in brackets) ===');
  console.log(table([['figure', 'value', 'target', 'met'], ...rows.map((r) => [r.figure, r.value, r.target, r.met === undefined ? '-' : r.met ? 'yes' : 'NO'])]));
}

/** The warm-up intervals of the default scenarios, by size: "100 ms (100 streams), 200 ms (1,000 streams)". */
function warmIntervals(): string {
  const bySize = new Map<number, number>();
  for (const s of CYCLE_SCENARIOS) if (s.warmPolls > 0) bySize.set(s.streams, s.warmIntervalMs);
  return [...bySize].map(([streams, ms]) => `${ms} ms (${streams.toLocaleString('en-US')} streams)`).join(', ');
}
