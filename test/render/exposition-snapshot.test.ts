/** ExpositionCache.snapshot(): the bytes and the one gzip stream a scrape sends, always of the newest swap. */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/serve/catalogue.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { finalPiece } from '../../src/render/gzip-stream.js';
import { SeriesWriter } from '../../src/render/series.js';

const alive = familyByName('flussonic_stream_alive');
const cpu = familyByName('flussonic_server_cpu_usage_ratio');

function chunks(server: string, streams: number) {
  const w = new SeriesWriter([['server', server]]);
  for (let i = 0; i < streams; i++) w.add(alive, [`stream-${i}`], i % 2 === 0);
  w.add(cpu, [], 0.5);
  return w.render();
}

/** Offsets of the gzip magic where a member could begin after the first. */
function laterMembers(payload: Buffer): number {
  let n = 0;
  for (let i = 1; i < payload.length - 2; i++) if (payload[i] === 0x1f && payload[i + 1] === 0x8b && payload[i + 2] === 8) n++;
  return n;
}

describe('ExpositionCache.snapshot', () => {
  it('gives one gzip stream, and the same text inflated as it is read, each followed by the tail', async () => {
    const cache = new ExpositionCache();
    cache.swap('a', chunks('a', 1000));
    cache.swap('b', chunks('b', 10));
    const snap = cache.snapshot();
    expect(snap.text).toMatch(/^# HELP flussonic_stream_alive /m);
    expect(snap.text.match(/^flussonic_stream_alive\{/gm)).toHaveLength(1010);
    expect(snap.bytes).toBe(Buffer.byteLength(snap.text));
    const tail = Buffer.from('flussonic_exporter_build_info{version="x"} 1\n');
    const streamed: Buffer[] = [];
    for await (const chunk of snap.plain(finalPiece(tail))) streamed.push(chunk as Buffer);
    expect(Buffer.concat(streamed).toString('utf8')).toBe(snap.text + tail.toString('utf8'));
    const gzip = Buffer.concat(snap.gzip(finalPiece(tail)));
    expect(gunzipSync(gzip).toString('utf8')).toBe(snap.text + tail.toString('utf8'));
    // One member: nothing after the first ends but the trailer (gunzipSync would read on silently).
    expect(laterMembers(gzip)).toBe(0);
  });

  it('keeps a family of two targets under one HELP/TYPE in the gzip stream too', () => {
    const cache = new ExpositionCache();
    cache.swap('a', chunks('a', 3));
    cache.swap('b', chunks('b', 3));
    const text = gunzipSync(Buffer.concat(cache.snapshot().gzip(finalPiece(new Uint8Array(0))))).toString('utf8');
    expect(text.match(/^# TYPE flussonic_stream_alive gauge$/gm)).toHaveLength(1);
    expect(text).toBe(cache.current.text);
  });

  it('gives an empty exposition as a valid gzip of the tail alone', () => {
    const cache = new ExpositionCache();
    const snap = cache.snapshot();
    expect(snap.bytes).toBe(0);
    expect(gunzipSync(Buffer.concat(snap.gzip(finalPiece(Buffer.from('x 1\n'))))).toString('utf8')).toBe('x 1\n');
    expect(gunzipSync(Buffer.concat(snap.gzip(finalPiece(new Uint8Array(0))))).toString('utf8')).toBe('');
  });

  it('serves the newest swap: a snapshot taken after a swap has it, one taken before does not change', () => {
    const cache = new ExpositionCache();
    cache.swap('a', chunks('a', 5));
    const before = cache.snapshot();
    cache.swap('late', chunks('late', 2));
    const after = cache.snapshot();
    expect(after.version).toBe(before.version + 1);
    expect(gunzipSync(Buffer.concat(after.gzip(finalPiece(new Uint8Array(0))))).toString('utf8')).toContain('server="late"');
    expect(gunzipSync(Buffer.concat(before.gzip(finalPiece(new Uint8Array(0))))).toString('utf8')).not.toContain('server="late"');
  });

  it('sends many small pieces as few buffers, with the same bytes', () => {
    const cache = new ExpositionCache();
    for (let t = 0; t < 300; t++) cache.swap(`t${t}`, chunks(`t${t}`, 20));
    const snap = cache.snapshot();
    const gzip = snap.gzip(finalPiece(new Uint8Array(0)));
    // 300 targets x 2 families + 2 headers would be 602 parts.
    expect(gzip.length).toBeLessThan(20);
    expect(gunzipSync(Buffer.concat(gzip)).toString('utf8')).toBe(snap.text);
    expect(snap.text.match(/^# TYPE flussonic_stream_alive gauge$/gm)).toHaveLength(1);
  });
});
