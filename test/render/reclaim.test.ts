/**
 * Replaced expositions' buffers are handed back once no response can still be sending them
 * (src/serve/reclaim.ts): never while a lease in their range is open, never after a lease in
 * their range was abandoned, and exactly once otherwise.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/serve/catalogue.js';
import { ExpositionCache, type ExpositionSnapshot } from '../../src/serve/exposition.js';
import { finalPiece } from '../../src/render/gzip-stream.js';
import { Reclaimer } from '../../src/serve/reclaim.js';
import { SeriesWriter } from '../../src/render/series.js';

function whole(n: number): Uint8Array {
  return new Uint8Array(n);
}

function recorder() {
  const freed: ArrayBuffer[] = [];
  return { freed, free: (buffers: ArrayBuffer[]) => freed.push(...buffers) };
}

describe('Reclaimer', () => {
  it('frees retired buffers at once when no lease is open, and each only once', () => {
    const { freed, free } = recorder();
    const r = new Reclaimer(free);
    const a = whole(10);
    const tracked = r.track(1, [a, a]);
    r.retire(tracked, 1);
    expect(freed).toEqual([a.buffer]);
    expect(r.waiting).toBe(0);
  });

  it('keeps buffers a lease of their range may send until it is released', () => {
    const { freed, free } = recorder();
    const r = new Reclaimer(free);
    const a = whole(10);
    const b = whole(10);
    const ta = r.track(1, [a]);
    const lease = r.lease(1);
    const tb = r.track(2, [b]);
    r.retire(ta, 1);
    expect(freed).toEqual([]);
    expect(r.waiting).toBe(1);
    // Held in every version of its range, not only the last.
    const c = whole(10);
    const tc = r.track(1, [c]);
    r.retire(tc, 3);
    expect(freed).toEqual([]);
    // A lease of a later version does not hold what it never saw.
    const later = r.lease(2);
    r.retire(tb, 2);
    expect(freed).toEqual([]);
    lease.release();
    expect(freed).toEqual([a.buffer]); // c was live in version 2 too
    later.release();
    expect(freed).toEqual([a.buffer, c.buffer, b.buffer]);
    lease.release(); // twice: nothing more
    expect(freed).toHaveLength(3);
  });

  it('never frees what an abandoned lease saw, also when it is retired long after', () => {
    const { freed, free } = recorder();
    const r = new Reclaimer(free);
    const a = whole(10);
    const b = whole(10);
    const ta = r.track(1, [a]);
    r.lease(3).abandon();
    const tb = r.track(5, [b]);
    r.retire(ta, 9); // live in 1..9, so the abandoned response of version 3 may still read it
    r.retire(tb, 9); // came in after version 3
    expect(freed).toEqual([b.buffer]);
    expect(r.waiting).toBe(0);
    // The pin is forgotten once nothing live in version 3 is left; later buffers are freed as usual.
    const c = whole(10);
    r.retire(r.track(10, [c]), 10);
    expect(freed).toEqual([b.buffer, c.buffer]);
  });

  it('abandons a lease open longer than its limit, leaving its buffers to the garbage collector', () => {
    const { freed, free } = recorder();
    let now = 0;
    const r = new Reclaimer(free, () => now, 1000);
    const a = whole(10);
    const ta = r.track(1, [a]);
    r.lease(1);
    r.retire(ta, 1);
    expect(r.waiting).toBe(1);
    now = 999;
    r.retire(r.track(2, []), 2);
    expect(r.waiting).toBe(1);
    now = 1000;
    r.retire(r.track(3, []), 3);
    expect(r.waiting).toBe(0);
    expect(freed).toEqual([]);
  });

  it('never takes a buffer a part does not span whole (a slice of a pool)', () => {
    const { freed, free } = recorder();
    const r = new Reclaimer(free);
    const pool = new ArrayBuffer(64);
    const pooled = Buffer.from('abc'); // Node's shared pool
    r.retire(r.track(1, [new Uint8Array(pool, 0, 32), new Uint8Array(pool, 32, 32), pooled, new Uint8Array(0)]), 1);
    expect(freed).toEqual([]);
  });
});

const alive = familyByName('flussonic_stream_alive');
const bytes = familyByName('flussonic_stream_input_received_bytes_total');

/**
 * Sample text with names that compress badly, so that a large family stays a piece of its own
 * (over 64 KiB deflated: sent as it is) and a small one is coalesced into a copy with others.
 */
function render(server: string, streams: number, round: number) {
  const w = new SeriesWriter([['server', server]]);
  let h = round + 1;
  for (let i = 0; i < streams; i++) {
    h = (Math.imul(h, 2654435761) + i) >>> 0;
    const name = `${h.toString(36)}-${(h ^ 0x5bd1e995).toString(16)}-${i}`;
    w.add(alive, [name], (i + round) % 2 === 0);
    if (i < 100) w.add(bytes, [name], i * 1000 + round);
  }
  return w.render();
}

/** Detaches the buffers, as handing them to a worker does; a second detach would throw. */
function detaching() {
  const freed = new Set<ArrayBuffer>();
  return {
    freed,
    free(buffers: ArrayBuffer[]) {
      for (const b of buffers) {
        if (freed.has(b)) throw new Error('freed twice');
        freed.add(b);
      }
      structuredClone(buffers, { transfer: buffers });
    },
  };
}

const EMPTY_TAIL = finalPiece(new Uint8Array(0));

describe('ExpositionCache with free', () => {
  it('keeps every open response whole through swaps and withdrawals, and frees the rest', () => {
    const { freed, free } = detaching();
    const cache = new ExpositionCache({ free });
    // A fixed pseudo-random walk: swaps, withdrawals, responses opened, released and abandoned.
    let seed = 7;
    const next = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const open: { snap: ExpositionSnapshot; text: string }[] = [];
    let abandoned = 0;
    for (let step = 0; step < 400; step++) {
      const action = next(6);
      const target = ['a', 'b', 'c'][next(3)]!;
      if (action <= 1) cache.swap(target, render(target, 50 + next(6000), step));
      else if (action === 2) cache.withdraw(target);
      else if (action === 3) {
        const snap = cache.snapshot();
        open.push({ snap, text: gunzipSync(Buffer.concat(snap.gzip(EMPTY_TAIL))).toString('utf8') });
      } else if (open.length > 0) {
        const [done] = open.splice(next(open.length), 1);
        // What it sends has not moved, whatever was swapped since it opened.
        expect(gunzipSync(Buffer.concat(done!.snap.gzip(EMPTY_TAIL))).toString('utf8')).toBe(done!.text);
        if (action === 4) done!.snap.lease.release();
        else {
          done!.snap.lease.abandon();
          abandoned++;
        }
      }
    }
    for (const { snap, text } of open) expect(gunzipSync(Buffer.concat(snap.gzip(EMPTY_TAIL))).toString('utf8')).toBe(text);
    // The current exposition is whole, and replaced ones were freed.
    const now = cache.snapshot();
    expect(now.text).toBe(gunzipSync(Buffer.concat(now.gzip(EMPTY_TAIL))).toString('utf8'));
    now.lease.release();
    expect(abandoned).toBeGreaterThan(5);
    expect(freed.size).toBeGreaterThan(100);
  });

  it('frees the buffers of a replaced target once the response that sends them is released', () => {
    const { freed, free } = detaching();
    const cache = new ExpositionCache({ free });
    cache.swap('a', render('a', 5000, 0));
    const snap = cache.snapshot();
    const text = snap.text;
    cache.swap('a', render('a', 5000, 1));
    expect(freed.size).toBe(0);
    expect(gunzipSync(Buffer.concat(snap.gzip(EMPTY_TAIL))).toString('utf8')).toBe(text);
    snap.lease.release();
    expect(freed.size).toBeGreaterThan(0);
    // Really handed over: what the released response held is gone from this thread.
    expect([...freed].every((b) => b.byteLength === 0)).toBe(true);
    expect(() => gunzipSync(Buffer.concat(snap.gzip(EMPTY_TAIL)))).toThrow();
    const now = cache.snapshot();
    expect(gunzipSync(Buffer.concat(now.gzip(EMPTY_TAIL))).toString('utf8')).toBe(now.text);
  });
});
