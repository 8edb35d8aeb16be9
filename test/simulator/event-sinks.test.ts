/**
 * The simulator's event sinks: GET/PUT/DELETE /event_sinks as the API serves them, and the events
 * of the simulated server's life posted to a loopback receiver on the simulator's (manual) clock:
 * filters, throttle batching, resend after a failure, the replay fault, userinfo as Basic, a
 * bounded queue, and event_id starting over on a restart.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { eventSinkConfigSchema, startSimulator, type RunningSimulator, type SimEvent, type SimulatorOptions } from '@flussonic-exporter/simulator';
import { runSimulate } from '@flussonic-exporter/simulator/cli';
import { basic, getJson, sendJson } from './http-client.js';

interface Received {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly events: SimEvent[];
}

/** A loopback receiver recording every batch; answers the next queued status, else 200. */
class Receiver {
  readonly batches: Received[] = [];
  readonly statuses: number[] = [];
  private server: Server | undefined;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.batches.push({ url: req.url ?? '', headers: req.headers, events: JSON.parse(Buffer.concat(chunks).toString('utf8')) as SimEvent[] });
        res.statusCode = this.statuses.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  url(path = '/events/sim'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  events(): SimEvent[] {
    return this.batches.flatMap((b) => b.events);
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const opened: { sim?: RunningSimulator; receivers: Receiver[] } = { receivers: [] };

async function start(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  opened.sim = await startSimulator({ clock: 'manual', churn: false, streams: 6, sessions: 10, catenaHistory: false, ...options });
  return opened.sim;
}

async function receiver(): Promise<Receiver> {
  const r = await new Receiver().start();
  opened.receivers.push(r);
  return r;
}

/** Move the manual clock and wait for what the sinks sent. */
async function advance(sim: RunningSimulator, ms: number): Promise<void> {
  sim.advance(ms);
  await sim.sinks.settled();
}

afterEach(async () => {
  await opened.sim?.close();
  opened.sim = undefined;
  await Promise.all(opened.receivers.splice(0).map((r) => r.close()));
});

describe('the event_sinks API', () => {
  it('lists, gets, upserts with a merge patch, validates and deletes event sinks', async () => {
    const sim = await start({ editAuth: { user: 'admin', password: 'pw' } });
    const api = `${sim.url}/streamer/api/v3/event_sinks`;
    const auth = { authorization: basic('admin', 'pw') };
    expect((await getJson(api, { headers: auth })).body).toMatchObject({ event_sinks: [], estimated_count: 0 });

    const put = await sendJson('PUT', `${api}/hooks`, { url: 'http://127.0.0.1:1/events/x', only: [{ event: ['source_*'] }], throttle_delay: 2 }, auth);
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ name: 'hooks', url: 'http://127.0.0.1:1/events/x', only: [{ event: ['source_*'] }], throttle_delay: 2 });
    const patched = await sendJson('PUT', `${api}/hooks`, { throttle_delay: null, resend_timeout: 3 }, auth);
    expect(patched.body).toEqual({ name: 'hooks', url: 'http://127.0.0.1:1/events/x', only: [{ event: ['source_*'] }], resend_timeout: 3 });
    expect((await getJson(`${api}/hooks`, { headers: auth })).body).toEqual(patched.body);
    expect((await getJson(api, { headers: auth })).body.event_sinks).toEqual([patched.body]);

    const bad = await sendJson('PUT', `${api}/other`, { url: 'ftp://x', throttle_delay: 'soon', only: [{ event: 'source_closed' }] }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer).sort()).toEqual(['/only/0/event', '/throttle_delay', '/url']);
    expect((await sendJson('PUT', `${api}/other`, { only: [] }, auth)).body.errors[0]).toMatchObject({ code: 'required', source: { pointer: '/url' } });
    expect((await getJson(`${api}/other`, { headers: auth })).status).toBe(404);
    // A change needs edit rights, as the other writes.
    expect((await sendJson('PUT', `${api}/hooks`, { url: 'http://127.0.0.1:1/' })).status).toBe(401);

    expect((await getJson(`${api}/hooks`, { method: 'DELETE', headers: auth })).status).toBe(204);
    expect((await getJson(`${api}/hooks`, { headers: auth })).status).toBe(404);
    expect(sim.sinks.list()).toEqual([]);
  });

  it('is described in GET /schema by the schema PUT is validated with', async () => {
    const sim = await start();
    const doc = (await getJson(`${sim.url}/streamer/api/v3/schema`)).body;
    expect(Object.keys(doc.paths['/event_sinks/{name}']).sort()).toEqual(['delete', 'get', 'put']);
    expect(doc.paths['/event_sinks'].get.operationId).toBe('event_sinks_list');
    expect(doc.components.schemas.event_sink_config).toEqual(JSON.parse(JSON.stringify(eventSinkConfigSchema)));
    const max = doc.components.schemas.event_sink_config.properties.throttle_delay.maximum as number;
    const url = `${sim.url}/streamer/api/v3/event_sinks/s`;
    expect((await sendJson('PUT', url, { url: 'http://127.0.0.1:1/', throttle_delay: max + 1 })).status).toBe(400);
    expect((await sendJson('PUT', url, { url: 'http://127.0.0.1:1/', throttle_delay: max })).status).toBe(200);
  });

  it('refuses a bad sink given at start with the option and the reason', async () => {
    await expect(startSimulator({ clock: 'manual', eventSinks: [{ name: 'x', url: 'gopher://nowhere' }] })).rejects.toThrow(/eventSinks: sink "x": \/url does not match/);
  });
});

describe('events posted to a sink', () => {
  it('starts with server_started (event_id 1); a source drop between two polls is one source_closed and leaves the polled state as it was', async () => {
    const r = await receiver();
    const sim = await start({ eventSinks: [{ name: 'exporter', url: r.url() }] });
    const stream = sim.world.streams.names().find((n) => sim.world.streams.get(n)?.stats !== undefined)!;
    const polled = () => (sim.world.streams.get(stream)!.stats as Record<string, unknown>).alive;
    expect(polled()).toBe(true);

    sim.world.streams.dropSource(stream, 4000);
    await advance(sim, 4000);
    await advance(sim, 11_000);
    expect(polled()).toBe(true);

    const events = r.events();
    expect(events[0]).toMatchObject({ event: 'server_started', event_id: 1, previous_state: 'shutdown', server_id: sim.world.server.stats().id });
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    const source = events.filter((e) => e.media === stream);
    expect(source.map((e) => e.event)).toEqual(['source_closed', 'source_opened', 'source_started']);
    const t0 = events[0]!.utc_ms;
    expect(source.map((e) => e.utc_ms - t0)).toEqual([0, 4000, 4000]);
    expect(source[0]).toMatchObject({ type: 'ingest', url: expect.stringMatching(/:\/\//), reason: { error: 'source_lost' } });
    for (const b of r.batches) expect(b.headers['content-type']).toBe('application/json');
  });

  it('sends play_opened/play_closed with the session id, protocol and duration, stream, push and transcoder events', async () => {
    const r = await receiver();
    const sim = await start({ eventSinks: [{ name: 'all', url: r.url() }] });
    const stream = sim.world.streams.names()[0]!;
    const session = sim.world.sessions.open({ name: stream, proto: 'dash' });
    await advance(sim, 7000);
    sim.world.sessions.close(session.id as string);
    sim.world.streams.put('pushed', { inputs: [{ url: 'udp://239.0.0.1:1234' }], pushes: [{ url: 'rtmp://cdn.example.net/live/x' }] });
    sim.world.streams.blockPush('pushed', 0, 3000);
    sim.world.server.deviceShortage(0);
    await advance(sim, 3000);
    sim.world.streams.delete('pushed');
    await advance(sim, 1000);

    const byKind = (kind: string) => r.events().filter((e) => e.event === kind);
    expect(byKind('play_opened')).toEqual([expect.objectContaining({ id: session.id, media: stream, proto: 'dash', type: 'play', opened_at: session.opened_at })]);
    expect(byKind('play_closed')).toEqual([expect.objectContaining({ id: session.id, media: stream, proto: 'dash', duration: 7, opened_at: session.opened_at, closed_at: (session.opened_at as number) + 7000 })]);
    expect(byKind('stream_opened').map((e) => e.media)).toEqual(['pushed']);
    expect(byKind('stream_closed')).toEqual([expect.objectContaining({ media: 'pushed', reason: 'deleted' })]);
    expect(byKind('push_blocked')).toEqual([expect.objectContaining({ media: 'pushed', url: 'rtmp://cdn.example.net/live/x', type: 'push' })]);
    expect(byKind('push_restored').map((e) => e.utc_ms - byKind('push_blocked')[0]!.utc_ms)).toEqual([3000]);
    expect(byKind('transcoder_device_insufficient_resources')).toEqual([expect.objectContaining({ deviceid: 0, reason: 'auto_resource_allocation' })]);
  });

  it('applies only/except filters per sink (values with * as a wildcard)', async () => {
    const a = await receiver();
    const b = await receiver();
    const sim = await start({
      eventSinks: [
        { name: 'sources', url: a.url(), only: [{ event: ['source_*'] }], except: [{ event: ['source_started'] }] },
        { name: 'one-stream', url: b.url(), only: [{ event: ['play_*', 'server_started'] }, { event: ['source_closed'], media: ['nothing-*'] }] },
      ],
    });
    const [s1, s2] = sim.world.streams.names();
    sim.world.streams.dropSource(s1!, 1000);
    sim.world.sessions.open({ name: s2! });
    await advance(sim, 1000);
    await advance(sim, 1000);
    expect(a.events().map((e) => [e.event, e.media])).toEqual([
      ['source_closed', s1],
      ['source_opened', s1],
    ]);
    expect(b.events().map((e) => e.event)).toEqual(['server_started', 'play_opened']);
  });

  it('gathers a batch over throttle_delay, and sends at once when more than 100 wait', async () => {
    const r = await receiver();
    const sim = await start({ sessions: 0, eventSinks: [{ name: 'slow', url: r.url(), throttle_delay: 5, only: [{ event: ['play_opened'] }] }] });
    const stream = sim.world.streams.names()[0]!;
    for (let i = 0; i < 3; i++) {
      sim.world.sessions.open({ name: stream });
      await advance(sim, 1000);
    }
    expect(r.batches).toHaveLength(0);
    await advance(sim, 2000);
    expect(r.batches.map((b) => b.events.length)).toEqual([3]);

    for (let i = 0; i < 101; i++) sim.world.sessions.open({ name: stream });
    await advance(sim, 0);
    expect(r.batches.map((b) => b.events.length)).toEqual([3, 101]);
  });

  it('resends the same batch (same event_ids) every resend_timeout until a 2xx, counting resent events in /config/stats', async () => {
    const r = await receiver();
    r.statuses.push(500, 503);
    const sim = await start({ eventSinks: [{ name: 'flaky', url: r.url(), resend_timeout: 4 }] });
    const resentBefore = (sim.world.server.stats().events as { resent_events: number }).resent_events;
    await advance(sim, 1000);
    expect(r.batches).toHaveLength(1);
    await advance(sim, 3999);
    expect(r.batches).toHaveLength(1);
    await advance(sim, 1);
    await advance(sim, 4000);
    expect(r.batches).toHaveLength(3);
    const ids = r.batches.map((b) => b.events.map((e) => e.event_id));
    expect(ids[1]).toEqual(ids[0]);
    expect(ids[2]).toEqual(ids[0]);
    expect(sim.sinks.state('flaky')).toMatchObject({ failures: 2, resentBatches: 2, confirmedBatches: 1, queued: 0, lastStatus: 200 });
    expect((sim.world.server.stats().events as { resent_events: number }).resent_events - resentBefore).toBe(2 * ids[0]!.length);
    await advance(sim, 10_000);
    expect(r.batches).toHaveLength(3);
  });

  it('replays a confirmed batch with the replay fault', async () => {
    const r = await receiver();
    const sim = await start({ eventSinks: [{ name: 'dup', url: r.url() }] });
    sim.sinks.fault('dup', { replayConfirmed: 1 });
    await advance(sim, 1000);
    sim.world.streams.dropSource(sim.world.streams.names()[0]!, 1500);
    await advance(sim, 1000);
    await advance(sim, 1000);
    await advance(sim, 1000);
    expect(r.batches.map((b) => b.events.map((e) => e.event_id))).toEqual([[1], [1], [2], [3, 4]]);
    expect(sim.sinks.state('dup')).toMatchObject({ replayedBatches: 1, confirmedBatches: 3 });
  });

  it('sends userinfo as Basic and leaves it out of the URL; the query string goes as given', async () => {
    const r = await receiver();
    const url = r.url('/events/demo?token=a%2Fb&x=1').replace('http://', 'http://ex%40p:s3cr%3At@');
    const sim = await start({ eventSinks: [{ name: 'secret', url }] });
    await advance(sim, 1000);
    expect(r.batches).toHaveLength(1);
    expect(r.batches[0]!.url).toBe('/events/demo?token=a%2Fb&x=1');
    expect(r.batches[0]!.headers.authorization).toBe(basic('ex@p', 's3cr:t'));
    expect(sim.requests.count()).toBe(0);
  });

  it('keeps at most resend_limit events for a sink that never answers, dropping the oldest and counting them', async () => {
    const sim = await start({ sessions: 0, eventSinks: [{ name: 'dead', url: 'http://127.0.0.1:1/events', resend_limit: 50, resend_timeout: 1 }] });
    const dropped = () => (sim.world.server.stats().events as { dropped_events: number }).dropped_events;
    const before = dropped();
    const stream = sim.world.streams.names()[0]!;
    await advance(sim, 1000);
    for (let i = 0; i < 200; i++) sim.world.sessions.open({ name: stream });
    await advance(sim, 1000);
    await advance(sim, 1000);
    const state = sim.sinks.state('dead');
    expect(state.queued).toBe(50);
    expect(state.droppedEvents).toBe(151);
    expect(dropped() - before).toBe(151);
    expect(state.confirmedBatches).toBe(0);
    expect(state.lastStatus).toBe(0);
  });

  it('starts event_id over after a restart, server_started first; what was buffered is lost', async () => {
    const r = await receiver();
    const sim = await start({ eventSinks: [{ name: 'x', url: r.url(), throttle_delay: 1 }] });
    const stream = sim.world.streams.names()[0]!;
    await advance(sim, 1000);
    sim.world.sessions.open({ name: stream });
    sim.world.sessions.open({ name: stream });
    await advance(sim, 1000);
    sim.world.sessions.open({ name: stream });
    sim.restart();
    sim.world.sessions.open({ name: stream });
    await advance(sim, 1000);
    expect(r.batches.map((b) => b.events.map((e) => [e.event_id, e.event]))).toEqual([
      [[1, 'server_started']],
      [
        [2, 'play_opened'],
        [3, 'play_opened'],
      ],
      [
        [1, 'server_started'],
        [2, 'play_opened'],
      ],
    ]);
    expect(sim.world.server.stats().uptime).toBe(1);
  });
});

describe('simulate --event-sink', () => {
  const capture = () => {
    let text = '';
    return { write: (t: string) => (text += t), get text() { return text; } };
  };

  it('posts on the real clock to the sink the flag names, credentials from the URL as Basic, never printed', async () => {
    const r = await receiver();
    const out = capture();
    const stop = new AbortController();
    const url = r.url('/events/demo').replace('http://', 'http://demo:flag-s3cret@');
    const running = runSimulate(['--port', '0', '--streams', '3', '--sessions', '5', '--event-sink', `demo=${url}`], { stdout: out, stderr: out, stop: stop.signal });
    await expect.poll(() => out.text, { interval: 10, timeout: 10_000 }).toContain('Stop with Ctrl-C');
    expect(out.text).toContain(`event sink demo: posting events to ${r.url('/events/demo')}`);
    expect(out.text).not.toContain('flag-s3cret');
    await expect.poll(() => r.batches.length, { interval: 50, timeout: 10_000 }).toBeGreaterThan(0);
    expect(r.batches[0]!.events[0]).toMatchObject({ event: 'server_started', event_id: 1 });
    expect(r.batches[0]!.headers.authorization).toBe(basic('demo', 'flag-s3cret'));
    stop.abort();
    expect(await running).toBe(0);
  });

  it.each([
    [['--event-sink', 'no-url'], /--event-sink: expected NAME=URL/],
    [['--event-sink', 'x=gopher://y'], /eventSinks: sink "x"/],
  ])('refuses %j with code 2 and the reason', async (argv, message) => {
    const err = capture();
    expect(await runSimulate(['--port', '0', ...argv], { stdout: capture(), stderr: err })).toBe(2);
    expect(err.text).toMatch(message);
  });
});
