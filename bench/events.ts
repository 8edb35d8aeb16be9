/**
 * The events phase of `npm run bench` (alone: `--only=events`), two readings:
 *
 *  1. Counting on one core: batches of 100 events (a mix of the kinds a sink sends, ids
 *     increasing, 1,000 streams) handed to EventsReceiver.receive() on this thread, against
 *     JSON.parse of the same bodies. Events per CPU-second (target >= 100,000) and the ratio of
 *     the two CPU times (target <= 1.5).
 *  2. Scrapes while events flow: the real command (`main.js --config`, events on) polling one
 *     simulated server, scraped with gzip every SCRAPE_EVERY_MS from a process of its own
 *     (bench/scraper-child.ts: this one serves the simulator's pages and posts the events, and a
 *     scrape timed here would also time whatever of that work it waited behind). ROUNDS rounds
 *     alternate a window without events and one with 10,000 events/s posted as ten servers' sinks
 *     send them (each one batch of 100 at a time, every 100 ms, on a phase of its own), so that
 *     both kinds of window see the same machine. The server is polled at start only (every 5
 *     min): a poll falls in one window of a round and decides its p99, events or not.
 *     The reading: each round's p99 with events over its p99 without (280 scrapes a window, so the
 *     3rd slowest); the target (within 20%) is the median of the rounds' ratios, as for the cycle
 *     phase: a stall of this shared machine spoils a round, not the reading. The p99s of all the
 *     scrapes of each kind are printed beside it.
 * About 45 s in all.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { startSimulator } from '@flussonic-exporter/simulator';
import { eventsSection } from '../src/config/events-schema.js';
import { EventsReceiver } from '../src/events/receiver.js';
import { Child } from './child.js';
import { childEnv, exporterNodeFlags, type ScrapeResult } from './common.js';
import { percentile } from './child-io.js';
import { freePort } from './steady.js';

const MAIN = process.env.BENCH_STEADY_MAIN ?? fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const SECRET = 'bench-events-secret';
const BATCH = 100;
const COUNTING_ROUNDS = 9;
const EVENTS_PER_SECOND = 10_000;
/** Rounds of a window without events, SETTLE_S of posting, then a window with events. */
const ROUNDS = 5;
const WINDOW_S = 3.5;
const SETTLE_S = 0.5;
const SCRAPE_EVERY_MS = 12.5;
/** Ten servers' sinks, each posting a batch of BATCH every SINK_EVERY_MS: EVENTS_PER_SECOND in all. */
const SINKS = 10;
const SINK_EVERY_MS = (SINKS * BATCH * 1000) / EVENTS_PER_SECOND;

export interface EventsFigures {
  readonly eventsPerCpuSecond: number;
  readonly ratioToJsonParse: number;
  readonly scrapeP99QuietMs: number;
  readonly scrapeP99WithEventsMs: number;
  readonly scrapeP99Ratio: number;
  /** Each round's p99 with events over its p99 without. */
  readonly scrapeP99RoundRatios: readonly number[];
  readonly eventsPostedPerSecond: number;
}

/** `count` batches of BATCH events, ids from `firstId`, as Flussonic would send them. */
export function eventBodies(count: number, streams: readonly string[], firstId = 1): string[] {
  const out: string[] = [];
  let id = firstId;
  for (let b = 0; b < count; b++) {
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < BATCH; i++, id++) {
      const media = streams[id % streams.length]!;
      const utc = 1_700_000_000_000 + id;
      switch (id % 5) {
        case 0:
          events.push({ event: 'source_closed', event_id: id, utc_ms: utc, server_id: 'edge-1', media, url: `rtsp://cam/${media}`, reason: { type: 'timeout' } });
          break;
        case 1:
          events.push({ event: 'play_closed', event_id: id, utc_ms: utc, server_id: 'edge-1', media, id: `s-${id}`, proto: 'hls', opened_at: utc - 600_000, closed_at: utc, bytes: 123_456 });
          break;
        case 2:
          events.push({ event: 'play_opened', event_id: id, utc_ms: utc, server_id: 'edge-1', media, id: `s-${id}`, proto: 'dash', ip: '10.0.0.1' });
          break;
        case 3:
          events.push({ event: 'source_opened', event_id: id, utc_ms: utc, server_id: 'edge-1', media, url: `rtsp://cam/${media}` });
          break;
        default:
          events.push({ event: 'stream_updated', event_id: id, utc_ms: utc, server_id: 'edge-1', media });
      }
    }
    out.push(JSON.stringify(events));
  }
  return out;
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Reading 1: counting against JSON.parse, on this thread. */
export function measureCounting(): { eventsPerCpuSecond: number; ratio: number } {
  const streams = Array.from({ length: 1000 }, (_, i) => `stream-${i}`);
  const bodies = eventBodies(2000, streams);
  const config = eventsSection().parse({ enabled: true });
  const run = (firstId: number): { count: number; parse: number } => {
    const receiver = new EventsReceiver(config, pino({ level: 'silent' }));
    receiver.setServers([{ name: 'edge-1', eventsSecret: SECRET, staleAfterMs: 600_000 }]);
    receiver.streamsExported('edge-1', streams);
    const fresh = firstId === 1 ? bodies : eventBodies(2000, streams, firstId);
    let sink = 0;
    const p0 = cpuMicros();
    for (const body of fresh) sink += (JSON.parse(body) as unknown[]).length;
    const parse = cpuMicros() - p0;
    const c0 = cpuMicros();
    for (const body of fresh) if (receiver.receive('edge-1', body).code !== 200) throw new Error('a bench batch was refused');
    const count = cpuMicros() - c0;
    if (sink !== fresh.length * BATCH) throw new Error('parse');
    return { count, parse };
  };
  run(1); // warm-up: JIT and the receiver's shapes
  // Nine rounds, each its own JSON.parse baseline on the same bodies: the ratio is the median of the rounds'.
  const rounds = Array.from({ length: COUNTING_ROUNDS }, () => run(1));
  const count = percentile(rounds.map((r) => r.count), 50);
  return { eventsPerCpuSecond: (bodies.length * BATCH) / (count / 1e6), ratio: percentile(rounds.map((r) => r.count / r.parse), 50) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reading 2: paced scrape latency of the real command, without and with 10,000 events/s. */
export async function measureScrapesWithEvents(): Promise<{ quietP99: number; busyP99: number; roundRatios: number[]; posted: number }> {
  const sim = await startSimulator({ clock: 'real', churn: false, seed: 1, shape: 'flat', streams: 1000, sessions: 5000 });
  const dir = mkdtempSync(join(tmpdir(), 'flussonic-exporter-events-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `events:\n  enabled: true\nservers:\n  - name: edge-1\n    url: ${JSON.stringify(sim.url)}\n    poll_interval: 5m\n    events_secret: ${SECRET}\n`);
  const port = await freePort();
  const child = spawn(process.execPath, [...exporterNodeFlags(), MAIN, '--config', config, '--web.listen-address', `127.0.0.1:${port}`, '--log-level', 'warn'], { env: childEnv(), stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const agent = new Agent({ connections: SINKS });
  let scraper: Child | undefined;
  try {
    // Prometheus scrapes over a connection of its own: scrapes never queue behind the posts.
    const scrapes = (scraper = await Child.start('scraper-child.js'));
    for (let i = 0; i < 600; i++) {
      const ready = await request(`${url}/-/ready`, { dispatcher: agent }).then(async (r) => (await r.body.dump(), r.statusCode === 200), () => false);
      if (ready) break;
      await sleep(100);
    }
    const text = await (await request(`${url}/metrics`, { dispatcher: agent })).body.text();
    const streams = [...text.matchAll(/^flussonic_stream_alive\{server="edge-1",stream="([^"]+)"\}/gm)].map((m) => m[1]!);
    if (streams.length === 0) throw new Error('the exporter exported no streams');
    const scrapeFor = async (seconds: number): Promise<ScrapeResult> => {
      const result = await scrapes.request<ScrapeResult>({ url: `${url}/metrics`, concurrency: 1, maxRequests: Math.ceil((seconds * 1000) / SCRAPE_EVERY_MS) + 1, maxMs: seconds * 1000, gzip: true, everyMs: SCRAPE_EVERY_MS, latencies: true });
      if (result.errors > 0 || result.count === 0) throw new Error(`${result.errors} of ${result.count + result.errors} scrapes failed`);
      return result;
    };
    await scrapeFor(2); // warm-up
    // 10,000 events/s as ten servers' sinks send them: each sink one batch of 100 at a time, every
    // 100 ms on a phase of its own (Flussonic's sink sends as soon as it holds 100 events).
    const bodies = eventBodies((EVENTS_PER_SECOND / BATCH) * (ROUNDS * (WINDOW_S + SETTLE_S) + 2), streams, 1);
    const auth = `Basic ${Buffer.from(`flussonic:${SECRET}`).toString('base64')}`;
    let next = 0;
    let posted = 0;
    let postingMs = 0;
    /** Posts as SINKS sinks until `stop` resolves. */
    const postUntil = async (stop: Promise<unknown>) => {
      let posting = true;
      let failure: unknown;
      const sink = async (phaseMs: number) => {
        await sleep(phaseMs);
        while (posting) {
          if (next >= bodies.length) throw new Error('the bench ran out of event bodies');
          const started = performance.now();
          const r = await request(`${url}/events/edge-1`, { method: 'POST', dispatcher: agent, headers: { authorization: auth, 'content-type': 'application/json' }, body: bodies[next++]! });
          await r.body.dump();
          if (r.statusCode !== 200) throw new Error(`a batch was answered ${r.statusCode}`);
          posted += BATCH;
          await sleep(Math.max(0, SINK_EVERY_MS - (performance.now() - started)));
        }
      };
      const t0 = performance.now();
      const sinks = Array.from({ length: SINKS }, (_, i) => sink((i * SINK_EVERY_MS) / SINKS).catch((err: unknown) => void (failure ??= err)));
      try {
        await stop;
      } finally {
        posting = false;
        await Promise.all(sinks);
        postingMs += performance.now() - t0;
      }
      if (failure !== undefined) throw new Error(`posting events failed: ${String(failure)}`);
    };
    // Windows without and with events alternate, so that both see the same machine.
    const quiet: number[] = [];
    const busy: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const q = await scrapeFor(WINDOW_S);
      let b: ScrapeResult | undefined;
      await postUntil(sleep(SETTLE_S * 1000).then(async () => (b = await scrapeFor(WINDOW_S))));
      quiet.push(...q.latenciesMs!);
      busy.push(...b!.latenciesMs!);
      ratios.push(b!.p99Ms / q.p99Ms);
    }
    return { quietP99: percentile(quiet, 99), busyP99: percentile(busy, 99), roundRatios: ratios, posted: posted / (postingMs / 1000) };
  } finally {
    await Promise.all([agent.close(), scraper?.stop()]);
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    rmSync(dir, { recursive: true, force: true });
    await sim.close();
  }
}

export async function runEvents(): Promise<EventsFigures> {
  const counting = measureCounting();
  console.log(`events: counted ${Math.round(counting.eventsPerCpuSecond).toLocaleString('en')} events per CPU-second in batches of ${BATCH} (target >= 100,000); ${counting.ratio.toFixed(2)}x the CPU of JSON.parse of the same bodies (target <= 1.5)`);
  const scrapes = await measureScrapesWithEvents();
  const ratio = percentile(scrapes.roundRatios, 50);
  const [low, high] = [Math.min(...scrapes.roundRatios), Math.max(...scrapes.roundRatios)];
  console.log(
    `events: paced scrape p99 with ${Math.round(scrapes.posted).toLocaleString('en')} events/s posted / without, median of ${ROUNDS} rounds: ${ratio.toFixed(2)}x (${low.toFixed(2)}-${high.toFixed(2)}; target <= 1.2); all scrapes: ${scrapes.quietP99.toFixed(1)} ms without events, ${scrapes.busyP99.toFixed(1)} ms with`,
  );
  return { eventsPerCpuSecond: counting.eventsPerCpuSecond, ratioToJsonParse: counting.ratio, scrapeP99QuietMs: scrapes.quietP99, scrapeP99WithEventsMs: scrapes.busyP99, scrapeP99Ratio: ratio, scrapeP99RoundRatios: scrapes.roundRatios, eventsPostedPerSecond: scrapes.posted };
}
