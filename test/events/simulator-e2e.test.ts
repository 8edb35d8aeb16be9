/**
 * End to end: a real exporter on loopback polls the simulator (manual clock, polls 15 s apart by
 * pollOnce), and the simulator's event sink posts to the exporter's POST /events/<server> with the
 * server's secret as URL userinfo, as docs/events.md tells Flussonic to. What the polls miss (a
 * source down for 4 s between two polls) is counted once; a replayed batch and a batch resent after
 * a 500 are not counted again. The 500 comes from a loopback proxy between sink and exporter (a test
 * partner standing for a network hop that fails once), never from a mock of the exporter.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import type { ServerConfig } from '../../src/config/types.js';
import { createExporter, type Exporter } from '../../src/exporter.js';
import { captureLogger, eventsConfig, exporterConfig, serverConfig } from '../helpers/runtime.js';
import { samples, value } from '../helpers/exposition.js';

const SERVER = 'edge-1';
const SECRET = 'e2e-sink-Pa55';
const SINK = 'prometheus_exporter';
const POLL_MS = 15_000;
/** The simulator's resend_timeout when the sink sets none (docs/simulator.md). */
const RESEND_MS = 10_000;
const EVENTS = eventsConfig({ sinkName: SINK });

interface World {
  readonly sim: RunningSimulator;
  readonly exporter: Exporter;
  /** http://127.0.0.1:PORT of the exporter's listener. */
  readonly base: string;
}

const opened: { world?: World; proxy?: FailOnceProxy } = {};

afterEach(async () => {
  const { world, proxy } = opened;
  opened.world = undefined;
  opened.proxy = undefined;
  // The simulator first: its sink stops posting before the proxy and the exporter go.
  await world?.sim.close();
  await proxy?.close();
  await world?.exporter.stop();
  await world?.exporter.app.close();
});

/** `settings`: the server's config beyond its URL and secret, given the simulator (its streams' names). */
async function start(settings: (sim: RunningSimulator) => Partial<ServerConfig> = () => ({})): Promise<World> {
  const sim = await startSimulator({ streams: 4, sessions: 0, clock: 'manual', churn: false, seed: 7, shape: 'flat', catenaHistory: false });
  const config = exporterConfig([serverConfig(SERVER, sim.url, { eventsSecret: SECRET, ...settings(sim) })], { events: EVENTS, workers: 1 });
  const exporter = createExporter({ config, logger: captureLogger().logger, version: 'test' });
  const base = await exporter.app.listen({ host: '127.0.0.1', port: 0 });
  opened.world = { sim, exporter, base };
  return opened.world;
}

/** The sink URL Flussonic is given: the secret as userinfo (sent as Basic auth), the server in the path. */
function sinkUrl(base: string): string {
  return `${base.replace('http://', `http://flussonic:${SECRET}@`)}/events/${SERVER}`;
}

/** Move the simulator's clock and wait (bounded: each POST times out after 10 s) for what its sink sent. */
async function advance(sim: RunningSimulator, ms: number): Promise<void> {
  sim.advance(ms);
  await sim.sinks.settled();
}

async function metrics(base: string): Promise<string> {
  const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
  expect(res.status).toBe(200);
  return res.text();
}

/** A counter's value, 0 when the series is absent (a counter not yet made). */
const count = (text: string, name: string, labels: Record<string, string>) => value(text, name, labels) ?? 0;

/** A stream the simulator reports alive, whose source can drop. */
/** An exporter whose sink posts go through a FailOnceProxy in `mode`, polled once; a stream alive in it. */
async function startBehindProxy(mode: ConstructorParameters<typeof FailOnceProxy>[1]): Promise<World & { proxy: FailOnceProxy; stream: string }> {
  const world = await start();
  const proxy = await new FailOnceProxy(world.base, mode).start();
  opened.proxy = proxy;
  world.sim.sinks.put(SINK, { url: sinkUrl(proxy.base) });
  const stream = aliveStream(world.sim);
  await world.exporter.pollOnce(SERVER);
  return { ...world, proxy, stream };
}

function aliveStream(sim: RunningSimulator): string {
  const name = sim.world.streams.names().find((n) => (sim.world.streams.get(n)?.stats as { alive?: unknown } | undefined)?.alive === true);
  expect(name).toBeDefined();
  return name!;
}

/**
 * Between the simulator's sink and the exporter: the first POST fails with 500, either without
 * reaching the exporter ('refuse') or after the exporter answered (the answer lost, 'lose-answer');
 * every later POST is forwarded and its answer relayed.
 */
class FailOnceProxy {
  /** The status each POST got back, in order. */
  readonly answers: number[] = [];
  /** POSTs that reached the exporter, and what it answered. */
  readonly forwarded: number[] = [];
  private server: Server | undefined;
  private port = 0;

  constructor(
    private readonly target: string,
    private readonly mode: 'refuse' | 'lose-answer',
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(
        (status) => {
          this.answers.push(status);
          res.statusCode = status;
          res.end();
        },
        () => {
          this.answers.push(502);
          res.statusCode = 502;
          res.end();
        },
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage): Promise<number> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const first = this.answers.length === 0;
    if (first && this.mode === 'refuse') return 500;
    const headers: Record<string, string> = { 'content-type': req.headers['content-type'] ?? 'application/json' };
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    const res = await fetch(`${this.target}${req.url ?? '/'}`, { method: 'POST', headers, body: Buffer.concat(chunks), signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    this.forwarded.push(res.status);
    return first ? 500 : res.status;
  }
}

describe('events from the simulator to a real exporter', () => {
  it('counts a 4 s source drop between two 15 s polls exactly once, for that stream only, while both polls see it alive', async () => {
    const { sim, exporter, base } = await start();
    sim.sinks.put(SINK, { url: sinkUrl(base) });
    const stream = aliveStream(sim);

    await exporter.pollOnce(SERVER);
    const first = await metrics(base);
    const streams = samples(first, 'flussonic_stream_alive', { server: SERVER }).map((s) => s.labels.stream!);
    expect(streams).toHaveLength(4);
    expect(value(first, 'flussonic_stream_alive', { server: SERVER, stream })).toBe(1);
    for (const s of streams) expect(value(first, 'flussonic_stream_source_lost_total', { server: SERVER, stream: s })).toBe(0);

    await advance(sim, 5000);
    sim.world.streams.dropSource(stream, 4000);
    await advance(sim, 4000);
    await advance(sim, POLL_MS - 9000);
    await exporter.pollOnce(SERVER);
    const second = await metrics(base);

    expect(value(second, 'flussonic_stream_alive', { server: SERVER, stream })).toBe(1);
    expect(value(second, 'flussonic_stream_source_lost_total', { server: SERVER, stream })).toBe(1);
    for (const s of streams.filter((n) => n !== stream)) expect(value(second, 'flussonic_stream_source_lost_total', { server: SERVER, stream: s })).toBe(0);
    expect(value(second, 'flussonic_events_total', { server: SERVER, event: 'source_closed' })).toBe(1);
    expect(value(second, 'flussonic_events_total', { server: SERVER, event: 'source_opened' })).toBe(1);
    // Every event the sink had confirmed was counted, and none twice.
    const state = sim.sinks.state(SINK);
    expect(state).toMatchObject({ queued: 0, failures: 0, lastStatus: 200 });
    const counted = samples(second, 'flussonic_events_total', { server: SERVER }).reduce((sum, s) => sum + s.value, 0);
    expect(counted).toBe(state.confirmedEvents);
    expect(count(second, 'flussonic_exporter_event_batches_total', { server: SERVER, code: '200' })).toBe(state.confirmedBatches);
  });

  it('counts a replayed batch 0 more: the replay is delivered (200) and its events are duplicates', async () => {
    const { sim, exporter, base } = await start();
    sim.sinks.put(SINK, { url: sinkUrl(base) });
    const stream = aliveStream(sim);
    await exporter.pollOnce(SERVER);
    const before = await metrics(base);
    const stateBefore = sim.sinks.state(SINK);

    sim.sinks.fault(SINK, { replayConfirmed: 1 });
    sim.world.streams.dropSource(stream, 2000);
    await advance(sim, 2000);
    await advance(sim, 1000);
    const after = await metrics(base);

    const state = sim.sinks.state(SINK);
    expect(state.replayedBatches).toBe(1);
    expect(state.confirmedBatches - stateBefore.confirmedBatches).toBe(1);
    const batchEvents = state.confirmedEvents - stateBefore.confirmedEvents;
    expect(batchEvents).toBe(3); // source_closed, source_opened, source_started
    // Both POSTs (the batch and its replay) were answered 200 ...
    expect(count(after, 'flussonic_exporter_event_batches_total', { server: SERVER, code: '200' }) - count(before, 'flussonic_exporter_event_batches_total', { server: SERVER, code: '200' })).toBe(2);
    // ... and the replay counted nothing: each event once, the replayed ones as duplicates.
    expect(value(after, 'flussonic_stream_source_lost_total', { server: SERVER, stream })).toBe(1);
    for (const event of ['source_closed', 'source_opened', 'source_started']) {
      expect(count(after, 'flussonic_events_total', { server: SERVER, event }) - count(before, 'flussonic_events_total', { server: SERVER, event })).toBe(1);
    }
    expect(count(after, 'flussonic_exporter_events_duplicate_total', { server: SERVER }) - count(before, 'flussonic_exporter_events_duplicate_total', { server: SERVER })).toBe(batchEvents);
  });

  it('counts every event of the run after a restart, whose ids start over below the last run\'s', async () => {
    const { sim, exporter, base } = await start();
    sim.sinks.put(SINK, { url: sinkUrl(base) });
    const stream = aliveStream(sim);
    await exporter.pollOnce(SERVER);
    for (let i = 0; i < 3; i++) {
      sim.world.streams.dropSource(stream, 1000);
      await advance(sim, 2000);
    }
    sim.restart(); // server_started with event_id 1 and a new instance_id; the ids of this run are below the last one's
    await advance(sim, 1000);
    sim.world.streams.dropSource(stream, 1000);
    await advance(sim, 2000);

    const text = await metrics(base);
    const state = sim.sinks.state(SINK);
    expect(state).toMatchObject({ queued: 0, failures: 0, lastStatus: 200 });
    expect(value(text, 'flussonic_events_total', { server: SERVER, event: 'server_started' })).toBe(1);
    expect(value(text, 'flussonic_stream_source_lost_total', { server: SERVER, stream })).toBe(4);
    expect(count(text, 'flussonic_exporter_events_duplicate_total', { server: SERVER })).toBe(0);
    const counted = samples(text, 'flussonic_events_total', { server: SERVER }).reduce((sum, s) => sum + s.value, 0);
    expect(counted).toBe(state.confirmedEvents);
  });

  it('gives a stream the server\'s stream filter keeps out no series, before or after a poll: its events count in the server\'s totals', async () => {
    const alive = (sim: RunningSimulator) => sim.world.streams.names().filter((n) => (sim.world.streams.get(n)?.stats as { alive?: unknown } | undefined)?.alive === true);
    const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const { sim, exporter, base } = await start((s) => ({ streams: { exclude: { source: escape(alive(s)[1]!) } } }));
    const [kept, excluded] = alive(sim) as [string, string];
    expect(excluded).toBeDefined();
    sim.sinks.put(SINK, { url: sinkUrl(base) });
    const lost = (text: string) => samples(text, 'flussonic_stream_source_lost_total', { server: SERVER }).map((x) => x.labels.stream);

    await exporter.pollOnce(SERVER);
    expect(lost(await metrics(base))).not.toContain(excluded);
    expect(lost(await metrics(base))).toContain(kept);

    sim.world.streams.dropSource(kept, 2000);
    sim.world.streams.dropSource(excluded, 2000);
    await advance(sim, 3000);
    const afterEvents = await metrics(base);
    await advance(sim, POLL_MS - 3000);
    await exporter.pollOnce(SERVER);
    const afterPoll = await metrics(base);
    for (const text of [afterEvents, afterPoll]) {
      expect(text).not.toContain(`stream="${excluded}"`);
      expect(value(text, 'flussonic_stream_source_lost_total', { server: SERVER, stream: kept })).toBe(1);
      expect(value(text, 'flussonic_events_total', { server: SERVER, event: 'source_closed' })).toBe(2);
    }
  });

  it('a batch refused with 500 is sent again and counted once', async () => {
    const { sim, base, proxy, stream } = await startBehindProxy('refuse');

    sim.world.streams.dropSource(stream, 2000);
    await advance(sim, 2000);
    expect(proxy.answers).toEqual([500]);
    expect(value(await metrics(base), 'flussonic_stream_source_lost_total', { server: SERVER, stream })).toBe(0);

    await advance(sim, RESEND_MS);
    expect(proxy.answers).toEqual([500, 200]);
    expect(sim.sinks.state(SINK)).toMatchObject({ failures: 1, resentBatches: 1, confirmedBatches: 1, queued: 0 });
    const text = await metrics(base);
    expect(value(text, 'flussonic_stream_source_lost_total', { server: SERVER, stream })).toBe(1);
    expect(value(text, 'flussonic_events_total', { server: SERVER, event: 'source_closed' })).toBe(1);
    expect(count(text, 'flussonic_exporter_event_batches_total', { server: SERVER, code: '200' })).toBe(1);
    expect(count(text, 'flussonic_exporter_events_duplicate_total', { server: SERVER })).toBe(0);
  });

  it('a batch counted but answered 500 on the way back is sent again and not counted twice', async () => {
    const { sim, base, proxy, stream } = await startBehindProxy('lose-answer');

    sim.world.streams.dropSource(stream, 2000);
    await advance(sim, 2000);
    expect(proxy.answers).toEqual([500]);
    expect(proxy.forwarded).toEqual([200]);
    expect(value(await metrics(base), 'flussonic_stream_source_lost_total', { server: SERVER, stream })).toBe(1);

    await advance(sim, RESEND_MS);
    expect(proxy.answers).toEqual([500, 200]);
    expect(proxy.forwarded).toEqual([200, 200]);
    const state = sim.sinks.state(SINK);
    expect(state).toMatchObject({ failures: 1, resentBatches: 1, confirmedBatches: 1, queued: 0 });
    const text = await metrics(base);
    expect(value(text, 'flussonic_stream_source_lost_total', { server: SERVER, stream })).toBe(1);
    expect(value(text, 'flussonic_events_total', { server: SERVER, event: 'source_closed' })).toBe(1);
    expect(count(text, 'flussonic_exporter_event_batches_total', { server: SERVER, code: '200' })).toBe(2);
    expect(count(text, 'flussonic_exporter_events_duplicate_total', { server: SERVER })).toBe(state.confirmedEvents);
  });
});
