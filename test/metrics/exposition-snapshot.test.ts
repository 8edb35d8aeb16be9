/** ExpositionCache.snapshot(): the bytes and gzip a scrape sends, always of the newest swap. */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/metrics/catalogue.js';
import { ExpositionCache } from '../../src/metrics/exposition.js';
import { SeriesWriter } from '../../src/metrics/series.js';

const alive = familyByName('flussonic_stream_alive');

function chunks(server: string, streams: number) {
  const w = new SeriesWriter([['server', server]]);
  for (let i = 0; i < streams; i++) w.add(alive, [`stream-${i}`], i % 2 === 0);
  return w.render();
}

describe('ExpositionCache.snapshot', () => {
  it('gives the UTF-8 body and a gzip of exactly the newest text', async () => {
    const cache = new ExpositionCache();
    cache.swap('a', chunks('a', 1000));
    const snap = await cache.snapshot();
    expect(Buffer.concat([...snap.parts]).toString('utf8')).toBe(cache.current.text);
    expect(snap.bytes).toBe(Buffer.byteLength(cache.current.text));
    expect(gunzipSync(snap.gzip).toString('utf8')).toBe(snap.text);
  });

  it('never serves an older gzip after swaps that race the background compression', async () => {
    const cache = new ExpositionCache();
    for (let i = 1; i <= 5; i++) cache.swap(`t${i}`, chunks(`t${i}`, 2000));
    const pending = [cache.snapshot(), cache.snapshot()];
    cache.swap('late', chunks('late', 10));
    pending.push(cache.snapshot());
    const snaps = await Promise.all(pending);
    const last = snaps[2]!;
    expect(last.version).toBe(cache.current.version);
    expect(gunzipSync(last.gzip).toString('utf8')).toContain('server="late"');
    for (const s of snaps) expect(gunzipSync(s.gzip).toString('utf8')).toBe(s.text);
  });

  it('keeps the synchronous current.gzip right while a background gzip runs', () => {
    const cache = new ExpositionCache();
    cache.swap('a', chunks('a', 3000));
    expect(gunzipSync(cache.current.gzip).toString('utf8')).toBe(cache.current.text);
  });
});
