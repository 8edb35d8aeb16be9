/**
 * Benchmark phases of the threaded exporter (bench/run.ts runs them):
 *  - whole poll: the exporter process's CPU (every thread: collect, render, deflate, hand-over)
 *    per poll of one server, against two baselines fetching the same pages (the streams, sessions
 *    and server walks of the default collectors): fetch() + JSON.parse (the target's baseline)
 *    and undici + JSON.parse (a stricter reading);
 *  - deadlines: the poll loops on their own schedule with a short interval (6 s) while 20 scrapers
 *    hit /metrics: polls that failed their deadline, and the scrapes' latency beside a static
 *    server's (the floor of this machine);
 *  - fleet: N servers of 1,000 streams / 5,000 sessions (all polling one simulator), at two sizes:
 *    exporter CPU per server poll -> servers one core polls every 15 s, and RSS per additional
 *    server.
 */
import { availableParallelism } from 'node:os';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { isExporterRequest, type BaselineWalk, type ExpositionFigures, type LoopCounts, type PollCpu, type ScrapeResult, type Watched } from './common.js';
import { median } from './child-io.js';
import { mb } from './format.js';

export interface ChildLike {
  request<T>(message: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** The exporter's CPU per whole poll against one baseline of the same requests. */
export interface AgainstBaseline {
  readonly baselineCpuMs: number;
  /** exporter CPU (all threads) / baseline CPU, medians. */
  readonly cpuRatio: number;
  /**
   * The median of each round's own ratio (the exporter's poll over the baseline's walks next to it
   * in time), and the lowest and highest of them. The baseline's CPU for the same walks moves more
   * between runs than the exporter's (148-196 ms over four runs of one build, the exporter 317-355
   * ms), and a round's two sides meet the same state of the machine.
   */
  readonly roundRatio: { readonly median: number; readonly min: number; readonly max: number };
}

export interface WholePollFigures {
  readonly cpuMs: number;
  /**
   * Against Node's global fetch() + JSON.parse: what a plain client of the API spends, and the
   * baseline of the target. The whole-poll target (<= 1.6 x) is read against it.
   */
  readonly fetch: AgainstBaseline;
  /**
   * Against undici's Pool.request + JSON.parse: the exporter's own HTTP client, a stricter
   * reading printed beside the target.
   */
  readonly undici: AgainstBaseline;
  readonly wallMs: number;
  /**
   * Requests a poll (medians of the measured rounds): the exporter's, from the simulator's log, and
   * the fetch() baseline's, which replays them (the same count, or the baseline is not the same work).
   */
  readonly requests: { readonly exporter: number; readonly baseline: number };
  /** Rounds measured, after `warmup` rounds not counted. */
  readonly rounds: number;
  readonly warmup: number;
}

/**
 * Rounds of one whole poll (exporter) and the same requests (each baseline, in a process of its
 * own), the exporter first in every other round, after `warmup` such rounds that are not counted.
 * The figure is the steady state of a long-running exporter: a fresh process's CPU per poll of 10k
 * streams / 100k sessions falls for about a dozen polls (JIT tiers, heap sizing), e.g. 472, 513,
 * 455, 414, 428, 353, 386, 344, 367, 344, 373, 385 ms, then 319-403 (median 345) over the next 18;
 * the baseline's settles after its first walk (359, then 194-240 ms).
 */
export async function measureWholePoll(
  sim: RunningSimulator,
  exporter: ChildLike,
  baselines: { readonly undici: ChildLike; readonly fetch: ChildLike },
  /** The baseline's walks, asked for each round (their page sizes follow the exporter's: see baselineWalk() in run.ts). */
  walks: () => readonly unknown[],
  rounds: number,
  warmup: number,
): Promise<WholePollFigures> {
  const cpu: number[] = [];
  const wall: number[] = [];
  const base = { undici: [] as number[], fetch: [] as number[] };
  const requests = { exporter: [] as number[], baseline: [] as number[] };
  const baselineRound = async (counted: boolean, order: readonly ('undici' | 'fetch')[]) => {
    for (const client of order) {
      let ms = 0;
      let sent = 0;
      for (const walk of walks()) {
        const done = await baselines[client].request<BaselineWalk>({ ...(walk as object), client });
        ms += done.cpuMs;
        sent += done.requests;
      }
      if (counted) base[client].push(ms);
      if (counted && client === 'fetch') requests.baseline.push(sent);
    }
  };
  for (let round = 0; round < warmup + rounds; round++) {
    const counted = round >= warmup;
    sim.advance(15_000);
    const order = round % 4 < 2 ? (['undici', 'fetch'] as const) : (['fetch', 'undici'] as const);
    if (round % 2 === 1) await baselineRound(counted, order);
    sim.requests.clear();
    const r = await exporter.request<PollCpu>({ type: 'poll-cpu', rounds: 1 });
    if (counted) {
      cpu.push(r.cpuMs[0]!);
      wall.push(r.wallMs[0]!);
      requests.exporter.push(sim.requests.entries().filter(isExporterRequest).length);
    }
    if (round % 2 === 0) await baselineRound(counted, order);
  }
  const cpuMs = median(cpu);
  const against = (baseline: readonly number[]): AgainstBaseline => {
    const ratios = cpu.map((ms, i) => ms / baseline[i]!);
    const baselineCpuMs = median(baseline);
    return { baselineCpuMs, cpuRatio: cpuMs / baselineCpuMs, roundRatio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) } };
  };
  return {
    cpuMs,
    undici: against(base.undici),
    fetch: against(base.fetch),
    wallMs: median(wall),
    requests: { exporter: median(requests.exporter), baseline: median(requests.baseline) },
    rounds,
    warmup,
  };
}

export interface DeadlineFigures {
  readonly intervalMs: number;
  readonly seconds: number;
  readonly loops: LoopCounts;
  /** 20 scrapers back to back: the wire's throughput, shared. */
  readonly scrapes: ScrapeResult;
  /** 20 scrapers each once a second (a scrape interval), over the same kind of loops. */
  readonly paced: ScrapeResult;
  /**
   * The same paced scrapers against a static Node server sending a body of the same size, nothing
   * polling: the floor of this client on this machine, to read `paced` against.
   */
  readonly floor: ScrapeResult;
  /**
   * The same static server scraped back to back by the same scrapers: the floor to read `scrapes`
   * against (20 clients pulling 2 MB each as fast as they can share the machine with the server).
   */
  readonly floorBackToBack: ScrapeResult;
}

/** The loops on a short interval, scraped by `scrapers` back to back for `seconds`, then paced for `pacedSeconds`. */
export async function measureDeadlines(
  sim: RunningSimulator,
  children: { readonly startExporter: () => Promise<ChildLike>; readonly startStaticServer: () => Promise<ChildLike>; readonly scraper: ChildLike },
  options: { readonly intervalMs: number; readonly seconds: number; readonly pacedSeconds: number; readonly scrapers: number },
): Promise<DeadlineFigures> {
  const { startExporter, startStaticServer, scraper } = children;
  let figures: Omit<DeadlineFigures, 'floor' | 'floorBackToBack'>;
  const exporter = await startExporter();
  try {
    const { port } = await exporter.request<{ port: number }>({ type: 'init-serve', url: sim.url, intervalMs: options.intervalMs });
    await exporter.request({ type: 'poll-all' }); // warm: the first poll meets every session as new
    // The world moves on once per poll interval, about as often as a real-clock simulator catches
    // up (when asked, at most once a second): a step over 100,000 sessions takes 60-200 ms of this
    // process's CPU, and stepping every second put six of them between two polls, on a 2-core
    // machine the scrapers share.
    const ticker = setInterval(() => sim.advance(options.intervalMs), options.intervalMs);
    try {
      await exporter.request({ type: 'start-loops' });
      const before = await exporter.request<LoopCounts>({ type: 'loop-counts' });
      const url = `http://127.0.0.1:${port}/metrics`;
      const scrapes = await backToBackScrapes(scraper, url, options.seconds, options.scrapers);
      const paced = await pacedScrapes(scraper, url, options.pacedSeconds, options.scrapers);
      const after = await exporter.request<LoopCounts>({ type: 'loop-counts' });
      const loops = { polls: after.polls - before.polls, failed: after.failed - before.failed, deadline: after.deadline - before.deadline };
      figures = { intervalMs: options.intervalMs, seconds: options.seconds + options.pacedSeconds, loops, scrapes, paced };
    } finally {
      clearInterval(ticker);
    }
  } finally {
    await exporter.stop();
  }
  const floors = await staticFloors(scraper, startStaticServer, figures.paced.bytesPerScrape, {
    pacedSeconds: Math.min(30, options.pacedSeconds),
    backToBackSeconds: Math.min(20, options.seconds),
    scrapers: options.scrapers,
  });
  return { ...figures, ...floors };
}

/** `scrapers` loops asking `url` (gzip) one request after another, for `seconds`. */
function backToBackScrapes(scraper: ChildLike, url: string, seconds: number, scrapers: number): Promise<ScrapeResult> {
  return scraper.request<ScrapeResult>({ url, concurrency: scrapers, maxRequests: 10_000_000, maxMs: seconds * 1000, gzip: true });
}

/** `scrapers` loops asking `url` once a second each (gzip, as Prometheus does), for `seconds`. */
function pacedScrapes(scraper: ChildLike, url: string, seconds: number, scrapers: number): Promise<ScrapeResult> {
  return scraper.request<ScrapeResult>({ url, concurrency: scrapers, maxRequests: 10_000_000, maxMs: seconds * 1000, gzip: true, everyMs: 1000 });
}

/**
 * Paced, then back-to-back scrapes of a static loopback server answering every GET with `bytes`
 * bytes from memory, in a process of its own (bench/static-server-child.ts).
 */
async function staticFloors(
  scraper: ChildLike,
  startStaticServer: () => Promise<ChildLike>,
  bytes: number,
  options: { readonly pacedSeconds: number; readonly backToBackSeconds: number; readonly scrapers: number },
): Promise<Pick<DeadlineFigures, 'floor' | 'floorBackToBack'>> {
  const server = await startStaticServer();
  try {
    const { port } = await server.request<{ port: number }>({ type: 'listen', bytes });
    const url = `http://127.0.0.1:${port}/metrics`;
    const floor = await pacedScrapes(scraper, url, options.pacedSeconds, options.scrapers);
    const floorBackToBack = await backToBackScrapes(scraper, url, options.backToBackSeconds, options.scrapers);
    return { floor, floorBackToBack };
  } finally {
    await server.stop();
  }
}

export interface FleetSize {
  readonly servers: number;
  /** Exporter CPU (all threads) per server poll, ms (median round / servers). */
  readonly cpuMsPerServerPoll: number;
  readonly wallMsPerRound: number;
  /** RSS after the rounds, every server polled at once. */
  readonly rssMb: number;
  /** The loops on their own 15 s schedule (polls spread over the interval): CPU and peak RSS. */
  readonly scheduled?: Watched;
}

export interface FleetFigures {
  readonly sizes: readonly FleetSize[];
  /** 15 s of one core / CPU per server poll, at the larger size. */
  readonly serversPerCore: number;
  /** RSS growth per added server between the two sizes, every server polled at once. */
  readonly mbPerServer: number;
  /** Peak RSS growth per added server between the two sizes, the loops on their schedule. */
  readonly mbPerServerScheduled?: number;
  /** 15 s of one core / CPU per server poll at the larger size, the loops on their schedule. */
  readonly serversPerCoreScheduled?: number;
  readonly cores: number;
}

/** Rounds of polls before the fleet's CPU is measured (see measureFleet). */
const FLEET_WARMUP_ROUNDS = 4;
/** The fleet's poll interval on its own schedule, and how long the loops run before and while watched. */
const FLEET_INTERVAL_MS = 15_000;
const FLEET_SCHEDULE_SETTLE_MS = 2 * FLEET_INTERVAL_MS;
const FLEET_SCHEDULE_WATCH_MS = 2 * FLEET_INTERVAL_MS;

export async function measureFleet(sim: RunningSimulator, startExporter: () => Promise<ChildLike>, sizes: readonly [number, number], rounds: number, schedule = true): Promise<FleetFigures> {
  const measured: FleetSize[] = [];
  for (const servers of sizes) {
    const exporter = await startExporter();
    let r: PollCpu;
    try {
      await exporter.request({ type: 'init-serve', url: sim.url, servers, intervalMs: FLEET_INTERVAL_MS });
      // Warm-up: a fresh process needs a few rounds before its CPU per poll settles (JIT, and the
      // young generation growing to its size); the figure is the steady state of a long-running
      // exporter. The world moves on between warm-up rounds as it does between real polls.
      for (let i = 0; i < FLEET_WARMUP_ROUNDS; i++) {
        await exporter.request({ type: 'poll-cpu', rounds: 1 });
        sim.advance(FLEET_INTERVAL_MS);
      }
      r = await exporter.request<PollCpu>({ type: 'poll-cpu', rounds });
    } finally {
      await exporter.stop();
    }
    const scheduled = schedule ? await watchSchedule(sim, startExporter, servers) : undefined;
    measured.push({ servers, cpuMsPerServerPoll: median(r.cpuMs) / servers, wallMsPerRound: median(r.wallMs), rssMb: r.rssMb, ...(scheduled ? { scheduled } : {}) });
  }
  const [small, large] = measured as [FleetSize, FleetSize];
  return {
    sizes: measured,
    serversPerCore: FLEET_INTERVAL_MS / large.cpuMsPerServerPoll,
    mbPerServer: (large.rssMb - small.rssMb) / (large.servers - small.servers),
    ...(large.scheduled && small.scheduled
      ? {
          mbPerServerScheduled: (large.scheduled.peakRssMb - small.scheduled.peakRssMb) / (large.servers - small.servers),
          serversPerCoreScheduled: FLEET_INTERVAL_MS / (large.scheduled.cpuMs / Math.max(1, large.scheduled.polls)),
        }
      : {}),
    cores: availableParallelism(),
  };
}

/**
 * The loops of a fresh exporter process on their own schedule: the first polls all come within
 * 2 s, the next ones on each target's phase of the interval; watched once they are there. A fresh
 * process, because the heap that rounds of every server at once grew would stay in the RSS.
 */
async function watchSchedule(sim: RunningSimulator, startExporter: () => Promise<ChildLike>, servers: number): Promise<Watched> {
  const exporter = await startExporter();
  try {
    await exporter.request({ type: 'init-serve', url: sim.url, servers, intervalMs: FLEET_INTERVAL_MS });
    await exporter.request({ type: 'start-loops' });
    await exporter.request<Watched>({ type: 'watch', ms: FLEET_SCHEDULE_SETTLE_MS });
    return await exporter.request<Watched>({ type: 'watch', ms: FLEET_SCHEDULE_WATCH_MS });
  } finally {
    await exporter.stop();
  }
}

/** The lines these phases add to a scenario's output. */
export function printThreads(serve: { readonly wholePoll: WholePollFigures; readonly deadlines: DeadlineFigures | undefined; readonly exposition: ExpositionFigures }): void {
  const w = serve.wholePoll;
  console.log(`whole poll, exporter process CPU (all threads) ${w.cpuMs.toFixed(1)} ms (wall ${Math.round(w.wallMs)} ms; medians of ${w.rounds} rounds after ${w.warmup} not counted), against the same requests made`);
  console.log(`  (requests a poll: the exporter's ${w.requests.exporter}, replayed by the baselines ${w.requests.baseline})`);
  for (const [label, b] of [['with fetch() + JSON.parse (the target: see the targets table)', w.fetch], ['with undici (Pool.request) + JSON.parse (stricter)', w.undici]] as const) {
    const r = b.roundRatio;
    console.log(`  ${label}: ${b.baselineCpuMs.toFixed(1)} ms, x${b.cpuRatio.toFixed(2)}; round by round median x${r.median.toFixed(2)} (x${r.min.toFixed(2)}-x${r.max.toFixed(2)})`);
  }
  // The part of the ratio that is the output's size, not how it is made: whatever maps and renders
  // the samples, a gzip response of this text costs at least its deflate.
  const e = serve.exposition;
  console.log(
    `  of which deflating the ${mb(e.textBytes)} MB exposition alone (level 1, measured apart) ${e.gzipMs.toFixed(1)} ms: x${(e.gzipMs / w.undici.baselineCpuMs).toFixed(2)} of the undici baseline`,
  );
  const d = serve.deadlines;
  if (!d) return;
  const s = d.scrapes;
  console.log(
    `loops every ${d.intervalMs / 1000} s for ${d.seconds} s under ${s.count} scrapes (p50 ${s.p50Ms.toFixed(1)} / p99 ${s.p99Ms.toFixed(1)} / max ${s.maxMs.toFixed(1)} ms, ${s.errors} errors): ` +
      `${d.loops.polls} polls, ${d.loops.failed} failed (${d.loops.deadline} collector runs cut at the deadline)`,
  );
  const p = d.paced;
  console.log(`  then ${p.count} paced scrapes (${Math.round(p.count / p.seconds)} per second, each scraper once a second): p50 ${p.p50Ms.toFixed(1)} / p99 ${p.p99Ms.toFixed(1)} / max ${p.maxMs.toFixed(1)} ms, ${p.errors} errors`);
  const f = d.floor;
  const fb = d.floorBackToBack;
  console.log(`  the same client against a static Node server sending ${(p.bytesPerScrape / 1e6).toFixed(2)} MB from memory, nothing polling: p50 ${f.p50Ms.toFixed(1)} / p99 ${f.p99Ms.toFixed(1)} / max ${f.maxMs.toFixed(1)} ms over ${f.count} scrapes (paced p99 ${(p.p99Ms / f.p99Ms).toFixed(2)}x this)`);
  console.log(`  and back to back, as the scrapes above: p50 ${fb.p50Ms.toFixed(1)} / p99 ${fb.p99Ms.toFixed(1)} / max ${fb.maxMs.toFixed(1)} ms over ${fb.count} scrapes`);
}

/** The fleet phase on a simulator of its own, printed. */
export async function runFleet(startExporter: () => Promise<ChildLike>, sizes: readonly [number, number], rounds: number, schedule = true): Promise<FleetFigures> {
  const sim = await startSimulator({ clock: 'manual', churn: true, seed: 1, shape: 'flat', streams: 1000, sessions: 5000, gpus: 2, dvrs: 3 });
  try {
    const fleet = await measureFleet(sim, startExporter, sizes, rounds, schedule);
    console.log(`\n=== fleet: servers of 1,000 streams / 5,000 sessions, all threads of the exporter process (${fleet.cores} cores) ===`);
    for (const s of fleet.sizes) {
      console.log(`${s.servers} servers: CPU ${s.cpuMsPerServerPoll.toFixed(1)} ms per server poll, round of polls ${Math.round(s.wallMsPerRound)} ms wall, RSS ${Math.round(s.rssMb)} MB`);
      const w = s.scheduled;
      if (w) {
        console.log(
          `  on their 15 s schedule for ${FLEET_SCHEDULE_WATCH_MS / 1000} s: ${w.polls} polls, CPU ${(w.cpuMs / Math.max(1, w.polls)).toFixed(1)} ms per server poll, RSS peak ${Math.round(w.peakRssMb)} MB (end ${Math.round(w.endRssMb)} MB)`,
        );
      }
    }
    console.log(`=> polled all at once: ${Math.round(fleet.serversPerCore)} servers per core every 15 s, ${fleet.mbPerServer.toFixed(2)} MB RSS per additional server`);
    if (fleet.serversPerCoreScheduled !== undefined && fleet.mbPerServerScheduled !== undefined) {
      console.log(`=> on their schedule: ${Math.round(fleet.serversPerCoreScheduled)} servers per core every 15 s, ${fleet.mbPerServerScheduled.toFixed(2)} MB peak RSS per additional server`);
    }
    return fleet;
  } finally {
    await sim.close();
  }
}
