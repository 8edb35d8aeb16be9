/** The receiver's per-stream series follow the polled streams, and age out where nothing is polled. */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { constants, inflateRawSync } from 'node:zlib';
import { pino } from 'pino';
import { EventsReceiver } from '../../src/events/receiver.js';
import type { EventsConfig } from '../../src/config/types.js';
import { value } from '../helpers/exposition.js';

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
