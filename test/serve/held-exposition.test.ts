/**
 * Polls held where they ran (ExpositionCache.swapHeld): a poll nobody scrapes is never fetched,
 * a scrape fetches what it needs once, and a target whose last exposition was scraped has its next
 * poll fetched as soon as it arrives while the last one is still served. `fetch` here is what the pool passes: a function that brings
 * the worker's answer.
 */
import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/serve/catalogue.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { prepareSources, type PreparedTarget } from '../../src/render/prepare.js';
import { SeriesWriter } from '../../src/render/series.js';

const alive = familyByName('flussonic_stream_alive');

function prepared(server: string, stream: string): PreparedTarget {
  const w = new SeriesWriter([['server', server]]);
  w.add(alive, [stream], true);
  return prepareSources([w]);
}

/** A held poll: counts how often it is fetched; resolves when `answer()` is called (or at once). */
function held(value: PreparedTarget | undefined | Error, immediate = true) {
  const calls = { n: 0 };
  let release: () => void = () => undefined;
  const gate = immediate ? Promise.resolve() : new Promise<void>((r) => (release = r));
  const fetch = async () => {
    calls.n++;
    await gate;
    if (value instanceof Error) throw value;
    return value;
  };
  return { fetch, calls, answer: () => release() };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('held polls', () => {
  it('are not fetched while nobody scrapes; a scrape fetches the latest once', async () => {
    const cache = new ExpositionCache();
    const first = held(prepared('a', 'one'));
    const second = held(prepared('a', 'two'));
    cache.swapHeld('a', first.fetch);
    cache.swapHeld('a', second.fetch);
    await settle();
    expect([first.calls.n, second.calls.n]).toEqual([0, 0]);
    await Promise.all([cache.ready(), cache.ready()]);
    expect([first.calls.n, second.calls.n]).toEqual([0, 1]);
    expect(cache.snapshot().text).toContain('stream="two"');
    expect(cache.snapshot().text).not.toContain('stream="one"');
  });

  it('fetches the next poll at once after a scrape, serving the last until it is here, and stops once a poll goes unscraped', async () => {
    const cache = new ExpositionCache();
    cache.swapHeld('a', held(prepared('a', 'one')).fetch);
    await cache.ready();
    cache.snapshot(); // scraped
    const next = held(prepared('a', 'two'), false);
    cache.swapHeld('a', next.fetch);
    expect(next.calls.n).toBe(1);
    // A scrape meanwhile does not wait: it gets the last poll.
    await cache.ready();
    expect(cache.snapshot().text).toContain('stream="one"');
    next.answer();
    await settle();
    expect(cache.snapshot().text).toContain('stream="two"');
    // 'three' arrives after 'two' was scraped: asked for at once. 'four' after 'three' was not: left where it is.
    const third = held(prepared('a', 'three'));
    cache.swapHeld('a', third.fetch);
    await cache.settled();
    expect(third.calls.n).toBe(1);
    const unscraped = held(prepared('a', 'four'));
    cache.swapHeld('a', unscraped.fetch);
    await settle();
    expect(unscraped.calls.n).toBe(0);
  });

  it('counts a probe of one target as a scrape of it', async () => {
    const cache = new ExpositionCache();
    cache.swapHeld('a', held(prepared('a', 'one')).fetch);
    cache.swapHeld('b', held(prepared('b', 'one')).fetch);
    await cache.ready('a');
    expect(cache.targetBody('a')).toBeDefined();
    expect(cache.targetBody('b')).toBeUndefined();
    const nextA = held(prepared('a', 'two'));
    const nextB = held(prepared('b', 'two'));
    cache.swapHeld('a', nextA.fetch);
    cache.swapHeld('b', nextB.fetch);
    expect([nextA.calls.n, nextB.calls.n]).toEqual([1, 0]);
  });

  it('follows a poll replaced while it was asked for to its successor', async () => {
    const cache = new ExpositionCache();
    const old = held(undefined, false); // the worker answers "replaced"
    cache.swapHeld('a', old.fetch);
    const scrape = cache.ready();
    await settle();
    cache.swapHeld('a', held(prepared('a', 'newer')).fetch);
    old.answer();
    await scrape;
    expect(cache.snapshot().text).toContain('stream="newer"');
  });

  it('serves the other targets when a held poll cannot be brought (its worker crashed)', async () => {
    const cache = new ExpositionCache();
    cache.swapHeld('a', held(new Error('worker gone')).fetch);
    cache.swapHeld('b', held(prepared('b', 'ok')).fetch);
    await cache.ready();
    const text = cache.snapshot().text;
    expect(text).toContain('server="b"');
    expect(text).not.toContain('server="a"');
  });
});
