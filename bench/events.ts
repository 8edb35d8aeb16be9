/**
 * The events phase of `npm run bench` (alone: `--only=events`), two readings:
 *
 *  1. Counting on one core: batches of 100 events (a mix of the kinds a sink sends, ids
 *     increasing, 1,000 streams) handed to EventsReceiver.receive() on this thread, against
 *     JSON.parse of the same bodies. Events per CPU-second (target >= 100,000) and the ratio of
 *     the two CPU times (target <= 1.5).
 *  2. Scrapes while events flow: the real command (`main.js --config`, events on) polling one
 *     simulated server, scraped with gzip every 25 ms for EVENTS_PHASE_S without events, then as
 *     long with 10,000 events/s posted (100 batches of 100); p99 of each (target: within 20%).
 *     The scrapes come from a process of their own (bench/scraper-child.ts): this one serves the
 *     simulator's pages and posts the events, and a scrape timed here would also time whatever of
 *     that work it waited behind. Every 25 ms makes 600 scrapes a window, so that its p99 is the
 *     6th slowest scrape rather than the 2nd of 150.
 * About 50 s in all.
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
const EVENTS_PHASE_S = 15;
const SCRAPE_EVERY_MS = 25;

export interface EventsFigures {
  readonly eventsPerCpuSecond: number;
  readonly ratioToJsonParse: number;
  readonly scrapeP99QuietMs: number;
  readonly scrapeP99WithEventsMs: number;
  readonly scrapeP99Ratio: number;
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
export async function measureScrapesWithEvents(): Promise<{ quietP99: number; busyP99: number; posted: number }> {
  const sim = await startSimulator({ clock: 'real', churn: false, seed: 1, shape: 'flat', streams: 1000, sessions: 5000 });
  const dir = mkdtempSync(join(tmpdir(), 'flussonic-exporter-events-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `events:\n  enabled: true\nservers:\n  - name: edge-1\n    url: ${JSON.stringify(sim.url)}\n    poll_interval: 15s\n    events_secret: ${SECRET}\n`);
  const port = await freePort();
  const child = spawn(process.execPath, [...exporterNodeFlags(), MAIN, '--config', config, '--web.listen-address', `127.0.0.1:${port}`, '--log-level', 'warn'], { env: childEnv(), stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const agent = new Agent({ connections: 8 });
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
      const result = await scrapes.request<ScrapeResult>({ url: `${url}/metrics`, concurrency: 1, maxRequests: Math.ceil((seconds * 1000) / SCRAPE_EVERY_MS) + 1, maxMs: seconds * 1000, gzip: true, everyMs: SCRAPE_EVERY_MS });
      if (result.errors > 0 || result.count === 0) throw new Error(`${result.errors} of ${result.count + result.errors} scrapes failed`);
      return result;
    };
    await scrapeFor(2); // warm-up
    const quiet = await scrapeFor(EVENTS_PHASE_S);
    // 10,000 events/s: every 100 ms, 10 batches of 100.
    const bodies = eventBodies(EVENTS_PER_SECOND / BATCH * (EVENTS_PHASE_S + 3), streams, 1);
    const auth = `Basic ${Buffer.from(`flussonic:${SECRET}`).toString('base64')}`;
    let next = 0;
    let posted = 0;
    const postTick = async () => {
      const batch = bodies.slice(next, next + EVENTS_PER_SECOND / BATCH / 10);
      next += batch.length;
      await Promise.all(
        batch.map(async (body) => {
          const r = await request(`${url}/events/edge-1`, { method: 'POST', dispatcher: agent, headers: { authorization: auth, 'content-type': 'application/json' }, body });
          await r.body.dump();
          if (r.statusCode === 200) posted += BATCH;
        }),
      );
    };
    const poster = setInterval(() => void postTick(), 100);
    const t0 = performance.now();
    let busy: ScrapeResult;
    try {
      await sleep(1000);
      busy = await scrapeFor(EVENTS_PHASE_S);
    } finally {
      clearInterval(poster);
    }
    return { quietP99: quiet.p99Ms, busyP99: busy.p99Ms, posted: posted / ((performance.now() - t0) / 1000) };
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
  const ratio = scrapes.busyP99 / scrapes.quietP99;
  console.log(
    `events: paced scrape p99 ${scrapes.quietP99.toFixed(1)} ms without events, ${scrapes.busyP99.toFixed(1)} ms with ${Math.round(scrapes.posted).toLocaleString('en')} events/s posted: ${ratio.toFixed(2)}x (target <= 1.2)`,
  );
  return { eventsPerCpuSecond: counting.eventsPerCpuSecond, ratioToJsonParse: counting.ratio, scrapeP99QuietMs: scrapes.quietP99, scrapeP99WithEventsMs: scrapes.busyP99, scrapeP99Ratio: ratio, eventsPostedPerSecond: scrapes.posted };
}
