/** The receiver's per-stream series follow the polled streams, and age out where nothing is polled. */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { constants, inflateRawSync } from 'node:zlib';
import { pino } from 'pino';
import { EventsReceiver } from '../../src/events/receiver.js';
import type { EventsConfig } from '../../src/config/types.js';
import { mapStream } from '../../src/collect/streams-map.js';
import { SeriesWriter } from '../../src/render/series.js';
import { samples, value } from '../helpers/exposition.js';
import { serverConfig } from '../helpers/runtime.js';

const CONFIG: EventsConfig = { enabled: true, maxBodyBytes: 1 << 20, maxEventsPerBatch: 1000, dedupWindow: 1024, register: false, sinkName: 's', families: { push_blocked: false, stream_closed: false, play_per_stream: false } };
const server = (name: string) => ({ name, eventsSecret: 'x', staleAfterMs: 600_000 });
/** A sync-flushed piece's text (it has no final block). */
const inflate = (deflated: Uint8Array) => inflateRawSync(deflated, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
const lost = (media: string, id: number) => JSON.stringify([{ event: 'source_closed', event_id: id, media }]);

afterEach(() => vi.useRealTimers());

describe('event series and the polled streams', () => {
  test('a poll list makes source_lost 0 per stream and withdraws the streams it no longer has', () => {
    const r = new EventsReceiver(CONFIG, pino({ level: 'silent' }));
    r.setServers([server('edge-1')]);
    r.streamsExported('edge-1', ['a', 'b']);
    r.receive('edge-1', lost('a', 1));
    expect(value(r.render(), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'a' })).toBe(1);
    expect(value(r.render(), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'b' })).toBe(0);
    r.streamsExported('edge-1', ['b']);
    expect(value(r.render(), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'a' })).toBeUndefined();
  });

  test('on a server not polled here, a stream without events for stale_after goes', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const r = new EventsReceiver(CONFIG, pino({ level: 'silent' }));
    r.setServers([server('edge-1')]);
    r.receive('edge-1', lost('old', 1));
    vi.setSystemTime(1_000_000 + 600_001);
    r.receive('edge-1', lost('new', 2));
    expect(value(r.render(), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'old' })).toBeUndefined();
    expect(value(r.render(), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'new' })).toBe(1);
  });

  test('stream and server names are escaped as label values, UTF-8 written as it is', () => {
    const r = new EventsReceiver(CONFIG, pino({ level: 'silent' }));
    r.setServers([server('edge "1"')]);
    r.streamsExported('edge "1"', ['a"b\\c\nd', 'ünï']);
    r.receive('edge "1"', lost('ünï', 1));
    const text = r.render();
    expect(text).toContain('flussonic_stream_source_lost_total{server="edge \\"1\\"",stream="a\\"b\\\\c\\nd"} 0\n');
    expect(text).toContain('flussonic_stream_source_lost_total{server="edge \\"1\\"",stream="ünï"} 1\n');
  });

  test('the deflated series are made once per change', () => {
    const r = new EventsReceiver(CONFIG, pino({ level: 'silent' }));
    r.setServers([server('edge-1')]);
    r.streamsExported('edge-1', ['a', 'b']);
    const first = r.piece();
    expect(r.piece()).toBe(first);
    expect(value(inflate(first.deflated), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'a' })).toBe(0);
    r.receive('edge-1', lost('a', 1));
    const second = r.piece();
    expect(second).not.toBe(first);
    expect(value(inflate(second.deflated), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'a' })).toBe(1);
    expect(second.bytes).toBe(Buffer.byteLength(r.render()));
  });

  test('a server that left the config takes its series with it', () => {
    const r = new EventsReceiver(CONFIG, pino({ level: 'silent' }));
    r.setServers([server('edge-1'), server('edge-2')]);
    r.receive('edge-2', lost('a', 1));
    r.setServers([server('edge-1')]);
    expect(r.render()).not.toContain('edge-2');
  });
});

describe('the stream filter of the server (streams.include / exclude)', () => {
  const filtered = serverConfig('edge-1', 'http://127.0.0.1:9', { eventsSecret: 'x', streams: { include: { source: 'cam-.*' }, exclude: { source: 'cam-hidden' } } });
  const ALL_ON: EventsConfig = { ...CONFIG, families: { push_blocked: true, stream_closed: true, play_per_stream: true } };
  const T = Date.UTC(2026, 0, 1);
  let nextId = 1;
  const each = (media: string) => [
    { event: 'source_closed', event_id: nextId++, media },
    { event: 'push_blocked', event_id: nextId++, media },
    { event: 'stream_closed', event_id: nextId++, media },
    { event: 'play_closed', event_id: nextId++, media, proto: 'hls', opened_at: T, closed_at: T + 30_000 },
  ];

  test('lets through the streams the poll exports, by the same filter', () => {
    const out = new SeriesWriter([['server', 'edge-1']]);
    const exported = ['cam-1', 'cam-hidden', 'other'].map((name) => mapStream(out, { name, stats: { alive: true } }, filtered));
    expect(exported).toEqual(['cam-1', undefined, undefined]);
  });

  test('an event of a stream the filter keeps out makes no series of that stream: the server\'s totals count it', () => {
    const r = new EventsReceiver(ALL_ON, pino({ level: 'silent' }));
    r.setServers([filtered]);
    r.receive('edge-1', JSON.stringify([...each('cam-1'), ...each('cam-hidden'), ...each('other')]));
    const check = (text: string) => {
      expect(samples(text, 'flussonic_stream_source_lost_total', { server: 'edge-1' }).map((x) => [x.labels.stream, x.value])).toEqual([['cam-1', 1]]);
      for (const stream of ['cam-hidden', 'other']) expect(text).not.toContain(`stream="${stream}"`);
      expect(value(text, 'flussonic_stream_push_blocked_total', { server: 'edge-1', stream: 'cam-1' })).toBe(1);
      expect(value(text, 'flussonic_stream_closed_total', { server: 'edge-1', stream: 'cam-1' })).toBe(1);
      expect(value(text, 'flussonic_stream_play_sessions_closed_total', { server: 'edge-1', stream: 'cam-1', proto: 'hls' })).toBe(1);
      for (const event of ['source_closed', 'push_blocked', 'stream_closed', 'play_closed']) expect(value(text, 'flussonic_events_total', { server: 'edge-1', event })).toBe(3);
      expect(value(text, 'flussonic_play_session_duration_seconds_count', { server: 'edge-1', proto: 'hls' })).toBe(3);
    };
    check(r.render());
    // The next good poll exports what the filter lets through: nothing flaps, no count is lost.
    r.streamsExported('edge-1', ['cam-1']);
    check(r.render());
  });

  test('follows the filter of a reloaded config', () => {
    const r = new EventsReceiver(CONFIG, pino({ level: 'silent' }));
    r.setServers([server('edge-1')]);
    r.receive('edge-1', lost('cam-hidden', 1));
    expect(value(r.render(), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'cam-hidden' })).toBe(1);
    r.setServers([filtered]);
    r.receive('edge-1', lost('cam-hidden', 2));
    expect(value(r.render(), 'flussonic_stream_source_lost_total', { server: 'edge-1', stream: 'cam-hidden' })).toBe(1);
    // The next good poll withdraws the series the stream had before.
    r.streamsExported('edge-1', ['cam-1']);
    expect(r.render()).not.toContain('stream="cam-hidden"');
    expect(value(r.render(), 'flussonic_events_total', { server: 'edge-1', event: 'source_closed' })).toBe(2);
  });
});
