import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/serve/catalogue.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { prepareSources } from '../../src/render/prepare.js';
import { SeriesWriter } from '../../src/render/series.js';
import { findBinary, promtool } from '../helpers/promtool.js';

const alive = familyByName('flussonic_stream_alive');
const cpu = familyByName('flussonic_server_cpu_usage_ratio');

function chunksOf(server: string, streams: Record<string, boolean>, cpuRatio: number) {
  const w = new SeriesWriter([['server', server]]);
  for (const [name, isAlive] of Object.entries(streams)) w.add(alive, [name], isAlive);
  w.add(cpu, [], cpuRatio);
  return w.render();
}

describe('ExpositionCache', () => {
  it('keeps one HELP/TYPE per family with the series of every target under it', () => {
    const cache = new ExpositionCache();
    cache.swap('a', chunksOf('a', { one: true }, 0.5));
    cache.swap('b', chunksOf('b', { two: false }, 0.25));
    const text = cache.current.text;
    expect(text.match(/^# TYPE flussonic_stream_alive gauge$/gm)).toHaveLength(1);
    const block = text.slice(text.indexOf('# HELP flussonic_stream_alive'));
    expect(block).toMatch(/# TYPE flussonic_stream_alive gauge\nflussonic_stream_alive\{server="a",stream="one"\} 1\nflussonic_stream_alive\{server="b",stream="two"\} 0\n/);
  });

  it('renders a family two collectors of one poll wrote as one run, in the collectors\' order', () => {
    const a = new SeriesWriter([['server', 'a']]);
    const b = new SeriesWriter([['server', 'a']]);
    for (let i = 0; i < 3000; i++) a.add(alive, [`s${i}`], i % 2 === 0);
    a.add(cpu, [], 0.5);
    b.add(alive, ['late'], true);
    b.add(familyByName('flussonic_sessions_opened_total'), [], 7, []);
    const cache = new ExpositionCache();
    cache.swapPrepared('a', prepareSources([a, b]));
    const text = cache.current.text;
    expect(text.match(/^# TYPE flussonic_stream_alive gauge$/gm)).toHaveLength(1);
    expect(text).toContain('flussonic_stream_alive{server="a",stream="s2999"} 0\nflussonic_stream_alive{server="a",stream="late"} 1\n');
    expect(gunzipSync(cache.current.gzip).toString('utf8')).toBe(text);
  });

  it('replaces a target wholesale on swap, so a vanished stream disappears', () => {
    const cache = new ExpositionCache();
    cache.swap('a', chunksOf('a', { one: true, gone: true }, 0.5));
    cache.swap('a', chunksOf('a', { one: true }, 0.5));
    expect(cache.current.text).toContain('stream="one"');
    expect(cache.current.text).not.toContain('stream="gone"');
  });

  it('withdraws a target and leaves the others untouched', () => {
    const cache = new ExpositionCache();
    cache.swap('a', chunksOf('a', { one: true }, 0.5));
    cache.swap('b', chunksOf('b', { two: true }, 0.5));
    cache.withdraw('a');
    expect(cache.current.text).not.toContain('server="a"');
    expect(cache.current.text).toContain('server="b"');
    cache.retain(new Set());
    expect(cache.current.text).toBe('');
  });

  it('serves a gzip of exactly the text, rebuilt on each swap', () => {
    const cache = new ExpositionCache();
    const v0 = cache.current.version;
    cache.swap('a', chunksOf('a', { one: true }, 0.5));
    expect(cache.current.version).toBe(v0 + 1);
    expect(gunzipSync(cache.current.gzip).toString('utf8')).toBe(cache.current.text);
  });

  it('renders text that promtool check metrics accepts with no findings', (ctx) => {
    const bin = findBinary('promtool');
    if (!bin) return ctx.skip();
    const cache = new ExpositionCache();
    cache.swap('a', chunksOf('a', { 'c/01': true, 'with"quote': false }, 0.5));
    cache.swap('b', chunksOf('b', { x: true }, 1));
    const r = promtool(bin, ['check', 'metrics'], cache.current.text);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
