/** The dedup window (src/events/dedup.ts): exactly once within it, new runs when ids start over. */
import { describe, expect, test } from 'vitest';
import { pino } from 'pino';
import type { EventsConfig } from '../../src/config/types.js';
import { DedupWindow, runStartIdentity } from '../../src/events/dedup.js';
import { EventsReceiver } from '../../src/events/receiver.js';
import { value } from '../helpers/exposition.js';

/** 2026-01-01 in Unix ms. */
const T = Date.UTC(2026, 0, 1);
const CONFIG: EventsConfig = { enabled: true, maxBodyBytes: 1 << 20, maxEventsPerBatch: 1000, dedupWindow: 1024, register: false, sinkName: 's', families: { push_blocked: false, stream_closed: false, play_per_stream: false } };

describe('DedupWindow', () => {
  test('admits an id once, out of order within the window too', () => {
    const w = new DedupWindow(64);
    expect([5, 3, 9, 5, 3, 4, 9].map((id) => w.admit(id))).toEqual([true, true, true, false, false, true, false]);
  });

  test('forgets what slid out of the window: an id that far below starts a new run', () => {
    const w = new DedupWindow(64);
    expect(w.admit(10)).toBe(true);
    expect(w.admit(100)).toBe(true);
    // 10 is more than 64 below 100: a new run of the server, counted.
    expect(w.admit(10)).toBe(true);
    expect(w.admit(11)).toBe(true);
    expect(w.admit(10)).toBe(false);
  });

  test('a slot reused after the range advanced is not mistaken for a seen id', () => {
    const w = new DedupWindow(64);
    for (let id = 0; id < 64; id++) w.admit(id);
    expect(w.admit(64)).toBe(true); // same slot as 0
    expect(w.admit(70)).toBe(true);
    expect(w.admit(65)).toBe(true);
    expect(w.admit(64)).toBe(false);
  });

  test('a run start below the newest id starts a new run unless it is the run start of this run resent', () => {
    const start = runStartIdentity('server_started', T, 'first');
    const w = new DedupWindow(64);
    expect(w.admit(1, start)).toBe(true);
    for (let id = 2; id <= 20; id++) w.admit(id);
    expect(w.admit(1, start)).toBe(false); // the same event again: a resend
    expect(w.admit(2)).toBe(false);
    const fresh = new DedupWindow(64);
    for (let id = 2; id <= 20; id++) fresh.admit(id);
    expect(fresh.admit(1, start)).toBe(true); // the restart
    expect(fresh.admit(2)).toBe(true); // ids start over
    expect(fresh.admit(2)).toBe(false);
  });

  test('a restart whose server_started has the id of the last run\'s is a new run: another instance or time', () => {
    for (const next of [runStartIdentity('server_started', T + 60_000, 'second'), runStartIdentity('server_started', T, 'second'), runStartIdentity('server_started', T + 60_000, 'first')]) {
      const w = new DedupWindow(64);
      expect([1, 2, 3].map((id) => w.admit(id, id === 1 ? runStartIdentity('server_started', T, 'first') : undefined))).toEqual([true, true, true]);
      expect([1, 2, 3].map((id) => w.admit(id, id === 1 ? next : undefined))).toEqual([true, true, true]);
      // ... and that run's resends are dropped in turn.
      expect([1, 2, 3].map((id) => w.admit(id, id === 1 ? next : undefined))).toEqual([false, false, false]);
    }
  });

  test('a run start with an id this run gave another event starts a new run', () => {
    const w = new DedupWindow(64);
    for (let id = 1; id <= 20; id++) w.admit(id);
    expect(w.admit(1, runStartIdentity('server_started', T, 'x'))).toBe(true);
    expect(w.admit(2)).toBe(true);
  });

  test('a resent batch with both run starts of a run (server_started, later change_server_id) is all dropped', () => {
    const started = runStartIdentity('server_started', T, 'first');
    const changed = runStartIdentity('change_server_id', T + 5_000, 'first');
    const w = new DedupWindow(64);
    const batch = (): boolean[] => [1, 2, 3, 4].map((id) => w.admit(id, id === 1 ? started : id === 3 ? changed : undefined));
    expect(batch()).toEqual([true, true, true, true]);
    expect(batch()).toEqual([false, false, false, false]);
  });

  test('without utc_ms and instance_id, a run start with the id of this run\'s is taken for a resend', () => {
    const bare = runStartIdentity('server_started', undefined, undefined);
    const w = new DedupWindow(64);
    expect([w.admit(1, bare), w.admit(2), w.admit(1, bare)]).toEqual([true, true, false]);
    expect(w.admit(1, runStartIdentity('change_server_id', undefined, undefined))).toBe(true); // another kind
  });

  test('remembers a run start in a few bytes, however long its instance_id', () => {
    const long = 'i'.repeat(100_000);
    expect(runStartIdentity('server_started', T, long).length).toBeLessThan(120);
    expect(runStartIdentity('server_started', T, long)).toBe(runStartIdentity('server_started', T, long));
    expect(runStartIdentity('server_started', T, long)).not.toBe(runStartIdentity('server_started', T, `${long}j`));
    expect(runStartIdentity('server_started', T, 'a')).not.toBe(runStartIdentity('server_started', T, undefined));
  });
});

describe('the receiver across a restart of the server', () => {
  test('counts the events of both runs, and nothing of either run resent', () => {
    const r = new EventsReceiver(CONFIG, pino({ level: 'silent' }));
    r.setServers([{ name: 'edge', eventsSecret: 'x', staleAfterMs: 600_000 }]);
    const run = (instance: string, at: number) => JSON.stringify([
      { event: 'server_started', event_id: 1, utc_ms: at, instance_id: instance },
      { event: 'source_closed', event_id: 2, utc_ms: at + 1, media: 'cam1' },
      { event: 'source_closed', event_id: 3, utc_ms: at + 2, media: 'cam1' },
    ]);
    r.receive('edge', run('first', T));
    r.receive('edge', run('first', T)); // a resend
    r.receive('edge', run('second', T + 60_000)); // the server restarted
    r.receive('edge', run('second', T + 60_000));
    const text = r.render();
    expect(value(text, 'flussonic_events_total', { server: 'edge', event: 'server_started' })).toBe(2);
    expect(value(text, 'flussonic_events_total', { server: 'edge', event: 'source_closed' })).toBe(4);
    expect(value(text, 'flussonic_stream_source_lost_total', { server: 'edge', stream: 'cam1' })).toBe(4);
    expect(value(text, 'flussonic_exporter_events_duplicate_total', { server: 'edge' })).toBe(6);
  });
});
