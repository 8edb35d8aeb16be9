/**
 * The event sink route of a real exporter listening on loopback, posted to with fetch as
 * Flussonic posts: each answer and its counter, exactly once, the join with the polled streams,
 * bad input refused without touching other servers, and the secret kept out of every log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { MAX_NAME_LENGTH } from '../../src/config/bounds.js';
import { SESSION_SECONDS } from '../../src/events/kinds.js';
import { BASIC_CHALLENGE } from '../../src/serve/basic-auth.js';
import { createExporter, type Exporter } from '../../src/exporter.js';
import { captureLogger, eventsConfig, exporterConfig, serverConfig, type CapturedLog } from '../helpers/runtime.js';
import { samples, value } from '../helpers/exposition.js';
import { findBinary, promtool } from '../helpers/promtool.js';

const SECRET = 'sink-Pa55-secret';
const OTHER_SECRET = 'other-Pa55-secret';
// Names as long as a server's name may be: one of plain letters, one whose URL form is six times longer.
const LONGEST = 'l'.repeat(MAX_NAME_LENGTH);
const LONGEST_ENCODED = `${'é'.repeat(MAX_NAME_LENGTH - 2)}/ `;
const EVENTS = eventsConfig({ families: { push_blocked: true, stream_closed: false, play_per_stream: false } });

let sim: RunningSimulator;
let exporter: Exporter;
let log: CapturedLog;
let base: string;

beforeAll(async () => {
  sim = await startSimulator({ streams: 4, sessions: 5, clock: 'manual', churn: false, seed: 3, shape: 'flat' });
  log = captureLogger();
  const servers = [
    serverConfig('edge-1', sim.url, { eventsSecret: SECRET }),
    // Known, never polled here (as a server another replica owns): its events are accepted all the same.
    serverConfig('edge-2', 'http://127.0.0.1:9', { eventsSecret: OTHER_SECRET }),
    serverConfig('edge-3', 'http://127.0.0.1:9'),
    serverConfig(LONGEST, 'http://127.0.0.1:9', { eventsSecret: SECRET }),
    serverConfig(LONGEST_ENCODED, 'http://127.0.0.1:9', { eventsSecret: SECRET }),
  ];
  exporter = createExporter({ config: exporterConfig(servers, { events: EVENTS }), logger: log.logger, version: 'test' });
  base = await exporter.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await exporter?.stop();
  await exporter?.app.close();
  await sim?.close();
});

const basic = (secret: string) => `Basic ${Buffer.from(`flussonic:${secret}`).toString('base64')}`;

async function post(server: string, body: string, auth: { secret?: string; token?: string } = { secret: SECRET }): Promise<{ status: number; text: string; challenge: string | null }> {
  const query = auth.token !== undefined ? `?token=${encodeURIComponent(auth.token)}` : '';
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth.secret !== undefined) headers.authorization = basic(auth.secret);
  const res = await fetch(`${base}/events/${encodeURIComponent(server)}${query}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, text: await res.text(), challenge: res.headers.get('www-authenticate') };
}

async function metrics(): Promise<string> {
  const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return res.text();
}

let nextId = 1000;
const id = () => nextId++;
/** 2026-01-01 in Unix ms, as a session's timestamps are. */
const T = Date.UTC(2026, 0, 1);

describe('POST /events/<server>', () => {
  it('counts a batch, answers 200 and counts the answer', async () => {
    const batch = [
      { event: 'source_closed', event_id: id(), utc_ms: 1, media: 'cam-1', url: 'rtsp://x', reason: {} },
      { event: 'play_closed', event_id: id(), media: 'cam-1', proto: 'hls', opened_at: T, closed_at: T + 90_000 },
      { event: 'transcoder_device_insufficient_resources', event_id: id(), deviceid: 0 },
      { event: 'push_blocked', event_id: id(), media: 'cam-2' },
    ];
    expect((await post('edge-1', JSON.stringify(batch))).status).toBe(200);
    const text = await metrics();
    expect(value(text, 'flussonic_events_total', { server: 'edge-1', event: 'source_closed' })).toBe(1);
    expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'cam-1' })).toBe(1);
    expect(value(text, 'flussonic_play_session_duration_seconds_sum', { server: 'edge-1', proto: 'hls' })).toBe(90);
    expect(value(text, 'flussonic_play_session_duration_seconds_bucket', { server: 'edge-1', proto: 'hls', le: '60' })).toBe(0);
    expect(value(text, 'flussonic_play_session_duration_seconds_bucket', { server: 'edge-1', proto: 'hls', le: '120' })).toBe(1);
    expect(value(text, 'flussonic_transcoder_device_shortages_total', { server: 'edge-1' })).toBe(1);
    expect(value(text, 'flussonic_stream_push_blocked_total', { server: 'edge-1', stream: 'cam-2' })).toBe(1);
    expect(value(text, 'flussonic_exporter_event_batches_total', { server: 'edge-1', code: '200' })).toBe(1);
  });

  it('counts a replayed batch once, and the resent events as duplicates', async () => {
    const batch = JSON.stringify([{ event: 'source_closed', event_id: id(), media: 'replayed' }, { event: 'stream_opened', event_id: id(), media: 'replayed' }]);
    expect((await post('edge-1', batch)).status).toBe(200);
    const before = await metrics();
    expect((await post('edge-1', batch)).status).toBe(200);
    const after = await metrics();
    expect(value(after, 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'replayed' })).toBe(1);
    expect(value(after, 'flussonic_events_total', { server: 'edge-1', event: 'stream_opened' })).toBe(value(before, 'flussonic_events_total', { server: 'edge-1', event: 'stream_opened' }));
    expect(value(after, 'flussonic_exporter_events_duplicate_total', { server: 'edge-1' })! - value(before, 'flussonic_exporter_events_duplicate_total', { server: 'edge-1' })!).toBe(2);
  });

  it('starts a new run when the server restarts (server_started numbers from the start again)', async () => {
    await post('edge-2', JSON.stringify([{ event: 'source_closed', event_id: 5, media: 'a' }]), { secret: OTHER_SECRET });
    await post('edge-2', JSON.stringify([{ event: 'server_started', event_id: 1 }, { event: 'source_closed', event_id: 5, media: 'a' }]), { secret: OTHER_SECRET });
    const text = await metrics();
    expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge-2', stream: 'a' })).toBe(2);
    // The restart batch again: nothing more.
    await post('edge-2', JSON.stringify([{ event: 'server_started', event_id: 1 }, { event: 'source_closed', event_id: 5, media: 'a' }]), { secret: OTHER_SECRET });
    expect(value(await metrics(), 'flussonic_stream_source_lost_total', { server: 'edge-2', stream: 'a' })).toBe(2);
  });

  it('counts events without event_id apart, without deduplication', async () => {
    const batch = JSON.stringify([{ event: 'source_closed', media: 'no-id' }]);
    await post('edge-1', batch);
    await post('edge-1', batch);
    const text = await metrics();
    expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'no-id' })).toBe(2);
    expect(value(text, 'flussonic_exporter_events_without_id_total', { server: 'edge-1' })).toBeGreaterThanOrEqual(2);
  });

  it('takes the events of a server whose name is as long as a name may be, however long its URL form', async () => {
    expect(LONGEST_ENCODED).toHaveLength(MAX_NAME_LENGTH);
    for (const server of [LONGEST, LONGEST_ENCODED]) {
      const res = await post(server, JSON.stringify([{ event: 'server_started', event_id: 1 }]));
      expect(res.status).toBe(200);
      const text = await metrics();
      expect(value(text, 'flussonic_events_total', { server, event: 'server_started' })).toBe(1);
      expect(value(text, 'flussonic_exporter_event_batches_total', { server, code: '200' })).toBe(1);
    }
  });

  it('accepts the secret as ?token= too', async () => {
    expect((await post('edge-1', '[]', { token: SECRET })).status).toBe(200);
  });

  it('exports source_lost_total at 0 for every stream the poll exported, joined on the capped name', async () => {
    await exporter.pollOnce('edge-1');
    const text = await metrics();
    const polled = samples(text, 'flussonic_stream_alive', { server: 'edge-1' }).map((s) => s.labels.stream!);
    expect(polled.length).toBe(4);
    for (const stream of polled) expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge-1', stream })).toBe(0);
    // Streams that had events but are not exported by the poll went with it.
    expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'cam-1' })).toBeUndefined();
  });
});

describe('the exposition with event series', () => {
  const bin = findBinary('promtool');
  it.skipIf(!bin)('passes promtool check metrics (one HELP and TYPE per family, histograms whole)', async () => {
    await post('edge-1', JSON.stringify([{ event: 'play_closed', event_id: id(), media: 'x', proto: 'not-a-protocol', duration: 30 }]));
    const text = await metrics();
    expect(value(text, 'flussonic_play_session_duration_seconds_count', { server: 'edge-1', proto: 'other' })).toBe(1);
    const r = promtool(bin!, ['check', 'metrics'], text);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('bad input: its answer and counter, other servers untouched', () => {
  const otherBefore = async () => value(await metrics(), 'flussonic_exporter_event_batches_total', { server: 'edge-2', code: '200' });

  it('invalid JSON: 400', async () => {
    const other = await otherBefore();
    expect((await post('edge-1', '[{"event": "source_closed",')).status).toBe(400);
    expect((await post('edge-1', '{"event": "source_closed"}')).status).toBe(400);
    const text = await metrics();
    expect(value(text, 'flussonic_exporter_event_batches_total', { server: 'edge-1', code: '400' })).toBe(2);
    expect(value(text, 'flussonic_exporter_event_batches_total', { server: 'edge-2', code: '200' })).toBe(other);
  });

  it('a 10 MB body: 413, not read whole', async () => {
    const big = `[${'{"event":"play_closed","media":"x"},'.repeat(300_000)}{}]`;
    expect(big.length).toBeGreaterThan(10_000_000);
    expect((await post('edge-1', big)).status).toBe(413);
    expect(value(await metrics(), 'flussonic_exporter_event_batches_total', { server: 'edge-1', code: '413' })).toBe(1);
    expect(process.memoryUsage().rss).toBeLessThan(1024 * 1024 * 1024);
  });

  it('100,000 events in a batch: 413 (events.max_events_per_batch)', async () => {
    const many = `[${Array.from({ length: 100_000 }, () => '{}').join(',')}]`;
    const res = await post('edge-1', many);
    expect(res.status).toBe(413);
    expect(res.text).toContain('events.max_events_per_batch');
    expect(value(await metrics(), 'flussonic_exporter_event_batches_total', { server: 'edge-1', code: '413' })).toBe(2);
  });

  it('a 1 MB media name: counted under the capped label value', async () => {
    const media = 'm'.repeat(1024 * 1024);
    expect((await post('edge-1', JSON.stringify([{ event: 'source_closed', event_id: id(), media }]))).status).toBe(200);
    const lost = samples(await metrics(), 'flussonic_stream_source_lost_total', { server: 'edge-1' }).filter((s) => s.labels.stream!.startsWith('mmm'));
    expect(lost).toHaveLength(1);
    expect(Buffer.byteLength(lost[0]!.labels.stream!)).toBeLessThanOrEqual(256);
    expect(lost[0]!.value).toBe(1);
  });

  it('unknown kinds are counted as event="other"; malformed events rejected, the rest of the batch counted', async () => {
    const batch = [{ event: 'brand_new_kind', event_id: id() }, 42, { event_id: id() }, { event: 'source_closed', event_id: id(), media: 7 }, { event: 'source_closed', event_id: id(), media: 'good' }];
    expect((await post('edge-1', JSON.stringify(batch))).status).toBe(200);
    const text = await metrics();
    expect(value(text, 'flussonic_events_total', { server: 'edge-1', event: 'other' })).toBe(1);
    expect(value(text, 'flussonic_exporter_events_rejected_total', { server: 'edge-1', reason: 'not_object' })).toBe(1);
    expect(value(text, 'flussonic_exporter_events_rejected_total', { server: 'edge-1', reason: 'no_kind' })).toBe(1);
    expect(value(text, 'flussonic_exporter_events_rejected_total', { server: 'edge-1', reason: 'shape' })).toBe(1);
    expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'good' })).toBe(1);
  });

  it('an event with a number outside its valid range is rejected as malformed: no series becomes infinite or negative', async () => {
    const play = (fields: Record<string, number>) => ({ event: 'play_closed', event_id: id(), media: 'ranged', proto: 'dash', ...fields });
    const bad = [
      play({ duration: 1e308 }),
      play({ duration: 1e308 }),
      play({ opened_at: -1e308, closed_at: 1e308 }),
      play({ duration: -5 }),
      play({ duration: SESSION_SECONDS.max + 1 }),
      play({ opened_at: T, closed_at: 1e14 }),
      play({ opened_at: 1_000, closed_at: 91_000 }),
      { event: 'source_closed', event_id: -1, media: 'ranged' },
      { event: 'source_closed', event_id: 2 ** 53, media: 'ranged' },
    ];
    const good = [play({ duration: SESSION_SECONDS.max }), play({ opened_at: T, closed_at: T + 30_000 })];
    const before = await metrics();
    const rejected = (text: string) => value(text, 'flussonic_exporter_events_rejected_total', { server: 'edge-1', reason: 'shape' }) ?? 0;
    const played = (text: string) => value(text, 'flussonic_events_total', { server: 'edge-1', event: 'play_closed' }) ?? 0;
    expect((await post('edge-1', JSON.stringify([...bad, ...good]))).status).toBe(200);
    const text = await metrics();
    expect(rejected(text) - rejected(before)).toBe(bad.length);
    expect(played(text) - played(before)).toBe(good.length);
    expect(value(text, 'flussonic_play_session_duration_seconds_sum', { server: 'edge-1', proto: 'dash' })).toBe(SESSION_SECONDS.max + 30);
    expect(value(text, 'flussonic_play_session_duration_seconds_count', { server: 'edge-1', proto: 'dash' })).toBe(good.length);
    expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'ranged' })).toBeUndefined();
    for (const line of text.split('\n').filter((l) => l.startsWith('flussonic_play_session_duration_seconds'))) {
      const v = Number(line.slice(line.lastIndexOf(' ') + 1));
      expect(Number.isFinite(v) && v >= 0, line).toBe(true);
    }
  });

  it('an unknown server: 404, counted without a series of its name', async () => {
    expect((await post('nobody', '[]')).status).toBe(404);
    const text = await metrics();
    expect(text).not.toContain('nobody');
    expect(value(text, 'flussonic_exporter_event_batches_total', { server: '', code: '404' })).toBe(1);
  });

  it('wrong or missing credentials: 401, nothing counted; a server without events_secret accepts nothing', async () => {
    const batch = JSON.stringify([{ event: 'source_closed', event_id: id(), media: 'intruder' }]);
    expect((await post('edge-1', batch, { secret: 'wrong' })).status).toBe(401);
    expect((await post('edge-1', batch, { token: 'wrong-token-value' })).status).toBe(401);
    expect((await post('edge-1', batch, { secret: OTHER_SECRET })).status).toBe(401);
    expect((await post('edge-1', batch, {})).status).toBe(401);
    expect((await post('edge-3', batch, { secret: 'x' })).status).toBe(401);
    const text = await metrics();
    expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'intruder' })).toBeUndefined();
    expect(value(text, 'flussonic_exporter_event_batches_total', { server: 'edge-1', code: '401' })).toBe(4);
    expect(value(text, 'flussonic_exporter_event_batches_total', { server: 'edge-3', code: '401' })).toBe(1);
  });

  it('a 401 challenges for Basic credentials, as the web config\'s does; a sender that waits for it gets in', async () => {
    const batch = JSON.stringify([{ event: 'stream_opened', event_id: id(), media: 'challenged' }]);
    const refused = await post('edge-1', batch, {});
    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe(BASIC_CHALLENGE);
    expect((await post('edge-1', batch, { secret: 'wrong' })).challenge).toBe(BASIC_CHALLENGE);
    expect(refused.challenge!.split(' ')[0]!.toLowerCase()).toBe('basic');
    expect((await post('edge-1', batch, { secret: SECRET })).status).toBe(200);
  });

  it('the secrets never reach a log line or the metrics', async () => {
    await post('edge-1', '[', { token: SECRET });
    await post('edge-1', 'x'.repeat(5 * 1024 * 1024), { token: SECRET });
    const text = await metrics();
    for (const s of [SECRET, OTHER_SECRET, 'wrong-token-value']) {
      expect(log.text()).not.toContain(s);
      expect(text).not.toContain(s);
    }
  });
});
