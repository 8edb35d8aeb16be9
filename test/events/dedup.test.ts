/** The dedup window (src/events/dedup.ts): exactly once within it, new runs when ids start over. */
import { describe, expect, test } from 'vitest';
import { DedupWindow } from '../../src/events/dedup.js';

describe('DedupWindow', () => {
  test('admits an id once, out of order within the window too', () => {
    const w = new DedupWindow(64);
    expect([5, 3, 9, 5, 3, 4, 9].map((id) => w.admit(id, false))).toEqual([true, true, true, false, false, true, false]);
  });

  test('forgets what slid out of the window: an id that far below starts a new run', () => {
    const w = new DedupWindow(64);
    expect(w.admit(10, false)).toBe(true);
    expect(w.admit(100, false)).toBe(true);
    // 10 is more than 64 below 100: a new run of the server, counted.
    expect(w.admit(10, false)).toBe(true);
    expect(w.admit(11, false)).toBe(true);
    expect(w.admit(10, false)).toBe(false);
  });

  test('a slot reused after the range advanced is not mistaken for a seen id', () => {
    const w = new DedupWindow(64);
    for (let id = 0; id < 64; id++) w.admit(id, false);
    expect(w.admit(64, false)).toBe(true); // same slot as 0
    expect(w.admit(70, false)).toBe(true);
    expect(w.admit(65, false)).toBe(true);
    expect(w.admit(64, false)).toBe(false);
  });

  test('a new server_started below the newest id starts a new run; the same one resent does not', () => {
    const w = new DedupWindow(64);
    for (let id = 1; id <= 20; id++) w.admit(id, false);
    expect(w.admit(1, true)).toBe(false); // id 1 of this run: seen, so a resend
    const fresh = new DedupWindow(64);
    for (let id = 2; id <= 20; id++) fresh.admit(id, false);
    expect(fresh.admit(1, true)).toBe(true); // the restart
    expect(fresh.admit(2, false)).toBe(true); // ids start over
    expect(fresh.admit(2, false)).toBe(false);
  });
});
