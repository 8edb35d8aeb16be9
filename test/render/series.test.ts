import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/serve/catalogue.js';
import { SESSION_DURATION_BUCKETS } from '../../src/collect/sessions.js';
import { constants, crc32, inflateRawSync } from 'node:zlib';
import { prepareSources } from '../../src/render/prepare.js';
import { shedOrderOf } from '../../src/serve/catalogue.js';
import { LabelBlockCache } from '../../src/render/label-blocks.js';
import { escapeLabelValue, formatValue, SeriesWriter } from '../../src/render/series.js';
import { FamilyState } from '../../src/render/family-state.js';

const alive = familyByName('flussonic_stream_alive');
const clients = familyByName('flussonic_stream_clients');
const status = familyByName('flussonic_stream_status');
const inputActive = familyByName('flussonic_stream_input_active');
const duration = familyByName('flussonic_session_duration_seconds');

function lines(w: SeriesWriter, family: string): string[] {
  return Buffer.concat(w.render().get(family) ?? []).toString('utf8').split('\n').filter(Boolean);
}

describe('SeriesWriter', () => {
  it('puts the target label first and the family labels after it, in catalogue order', () => {
    const w = new SeriesWriter([['server', 'edge-1']]);
    w.add(clients, ['c/01'], 5);
    expect(lines(w, clients.name)).toEqual(['flussonic_stream_clients{server="edge-1",stream="c/01"} 5']);
  });

  it('turns booleans into 1 and 0', () => {
    const w = new SeriesWriter([['server', 's']]);
    w.add(alive, ['a'], true);
    w.add(alive, ['b'], false);
    expect(lines(w, alive.name)).toEqual([
      'flussonic_stream_alive{server="s",stream="a"} 1',
      'flussonic_stream_alive{server="s",stream="b"} 0',
    ]);
  });

  it('adds no sample for null or undefined, and counts no series for them', () => {
    const w = new SeriesWriter([['server', 's']]);
    w.add(clients, ['a'], null);
    w.add(clients, ['b'], undefined);
    expect(w.render().has(clients.name)).toBe(false);
    expect(w.series).toBe(0);
    expect(w.problemCount).toBe(0);
  });

  it('reports a value of the wrong type as a shape problem instead of a sample', () => {
    const w = new SeriesWriter([['server', 's']]);
    w.add(clients, ['a'], '12');
    w.add(clients, ['b'], { n: 1 });
    expect(w.render().has(clients.name)).toBe(false);
    expect(w.problemCount).toBe(2);
    expect(w.problems[0]).toEqual({ family: clients.name, labels: ['a'], got: 'string "12"' });
    expect(w.problems[1]?.got).toBe('object');
  });

  it('escapes backslash, double quote and newline in label values', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const w = new SeriesWriter([['server', 'x"y']]);
    w.add(clients, ['new\nline'], 1);
    expect(lines(w, clients.name)).toEqual(['flussonic_stream_clients{server="x\\"y",stream="new\\nline"} 1']);
  });

  it('formats special floats the way Prometheus parses them', () => {
    expect(formatValue(Number.NaN)).toBe('NaN');
    expect(formatValue(Infinity)).toBe('+Inf');
    expect(formatValue(-Infinity)).toBe('-Inf');
    expect(formatValue(0.25)).toBe('0.25');
    expect(formatValue(1e21)).toBe('1e+21');
  });

  it('drops series beyond max_series in arrival order and counts them', () => {
    const w = new SeriesWriter([['server', 's']], 3);
    for (let i = 0; i < 5; i++) w.add(clients, [`s${i}`], i);
    expect(lines(w, clients.name).map((l) => l.split(' ')[0])).toEqual([
      'flussonic_stream_clients{server="s",stream="s0"}',
      'flussonic_stream_clients{server="s",stream="s1"}',
      'flussonic_stream_clients{server="s",stream="s2"}',
    ]);
    expect(w.series).toBe(3);
    expect(w.dropped).toBe(2);
  });

  it('renders UTF-8 bytes, every line ending in a newline, across the blocks it encodes as it goes', () => {
    const w = new SeriesWriter([['server', 's']]);
    const names = Array.from({ length: 600 }, (_, i) => `Первый канал/${i} ✓`);
    names.forEach((name, i) => w.add(clients, [name], i));
    const bytes = Buffer.concat(w.render().get(clients.name)!);
    expect(bytes.at(-1)).toBe(0x0a);
    const text = bytes.toString('utf8');
    expect(text.split('\n').slice(0, -1)).toEqual(names.map((name, i) => `flussonic_stream_clients{server="s",stream="${name}"} ${i}`));
  });

  it('uses explicit label names for families with configured labels', () => {
    const sessions = familyByName('flussonic_sessions');
    const w = new SeriesWriter([['server', 's']]);
    w.add(sessions, ['hls', 'DE'], 7, ['proto', 'country']);
    expect(lines(w, sessions.name)).toEqual(['flussonic_sessions{server="s",proto="hls",country="DE"} 7']);
  });

  it('renders a histogram as cumulative buckets, +Inf, sum and count', () => {
    const w = new SeriesWriter([['server', 's']]);
    const buckets = SESSION_DURATION_BUCKETS.slice(0, 2);
    w.addHistogram(duration, ['hls'], { buckets, cumulativeCounts: [1, 3], sum: 70, count: 4 });
    expect(lines(w, duration.name)).toEqual([
      'flussonic_session_duration_seconds_bucket{server="s",proto="hls",le="10"} 1',
      'flussonic_session_duration_seconds_bucket{server="s",proto="hls",le="30"} 3',
      'flussonic_session_duration_seconds_bucket{server="s",proto="hls",le="+Inf"} 4',
      'flussonic_session_duration_seconds_sum{server="s",proto="hls"} 70',
      'flussonic_session_duration_seconds_count{server="s",proto="hls"} 4',
    ]);
    expect(w.series).toBe(1);
  });
});

describe('SeriesWriter budget (the tiers of src/families/define.ts)', () => {
  const trackInfo = familyByName('flussonic_stream_track_info'); // optional, shed first
  const pushSent = familyByName('flussonic_stream_push_sent_bytes_total'); // optional, after tracks
  const delay = familyByName('flussonic_stream_input_delay_seconds'); // default tier

  /** Writes `streams` streams: core alive + clients, default delay, optional push and track series. */
  function write(w: SeriesWriter, streams: number): void {
    for (let i = 0; i < streams; i++) {
      const s = `s${String(i).padStart(3, '0')}`;
      w.add(trackInfo, [s, 'v1', 'video', 'h264', '1', '1', ''], 1);
      w.add(alive, [s], true);
      w.add(pushSent, [s, '0'], 10);
      w.add(clients, [s], i);
      w.add(delay, [s], 0.5);
    }
  }

  it('sheds whole optional families first, in table order, then default ones, before any core series', () => {
    expect(shedOrderOf([alive.name, delay.name, pushSent.name, trackInfo.name])).toEqual([trackInfo.name, pushSent.name, delay.name]);
    const fits = new SeriesWriter([['server', 's']], 40);
    write(fits, 10); // 50 series: the track family (10) goes, the rest (40) fits
    expect(fits.series).toBe(40);
    expect(fits.shed).toEqual(new Map([[trackInfo.name, 10]]));
    expect(fits.dropped).toBe(0);
    expect([...fits.render().keys()].sort()).toEqual([alive.name, clients.name, pushSent.name, delay.name].sort());

    const tight = new SeriesWriter([['server', 's']], 20);
    write(tight, 10); // core is 20: every non-core family goes
    expect(tight.shed).toEqual(new Map([[trackInfo.name, 10], [pushSent.name, 10], [delay.name, 10]]));
    expect(tight.dropped).toBe(0);
    expect(lines(tight, clients.name)).toHaveLength(10);
  });

  it('drops core series only when they alone exceed the cap, the same ones every time', () => {
    const run = () => {
      const w = new SeriesWriter([['server', 's']], 7);
      write(w, 5);
      return w;
    };
    const a = run();
    expect(a.dropped).toBe(3);
    expect(a.series).toBe(7);
    expect([...a.render().keys()].sort()).toEqual([alive.name, clients.name].sort());
    expect(lines(a, alive.name).map((l) => l.split('"')[3])).toEqual(['s000', 's001', 's002', 's003']);
    expect(lines(run(), clients.name)).toEqual(lines(a, clients.name));
  });

  it('keeps what a run counted once its samples are released after rendering', () => {
    const w = new SeriesWriter([['server', 's']], 20);
    write(w, 10);
    w.add(clients, ['s000'], Number.NaN); // refused, counted
    const before = { series: w.series, shed: w.shed, dropped: w.dropped, invalid: w.checks.invalid };
    expect(prepareSources([w]).size).toBe(2);
    w.releaseSamples();
    expect({ series: w.series, shed: w.shed, dropped: w.dropped, invalid: w.checks.invalid }).toEqual(before);
    expect(before.shed.size).toBe(3);
    expect(before.invalid).toBe(1);
    expect(w.render().size).toBe(0);
  });

  it('renders the same after settle(), and a sample written after it goes to its own family alone', () => {
    const write = (w: SeriesWriter) => {
      const cache = new LabelBlockCache();
      cache.begin(w.constLabels, 0);
      w.useBlockCache(cache);
      for (let i = 0; i < 50; i++) {
        const stream = `s${i}`;
        w.add(alive, [stream], i % 2 === 0);
        w.add(clients, [stream], i);
        w.add(status, [stream, i % 3 === 0 ? 'running' : 'stopped'], 1);
      }
      return cache;
    };
    const plain = new SeriesWriter([['server', 's']]);
    write(plain);
    const settled = new SeriesWriter([['server', 's']]);
    const cache = write(settled);
    settled.settle();
    expect(settled.render()).toEqual(plain.render());
    // A family that shares its blocks takes a copy before it is written to; the other keeps its own.
    settled.add(clients, ['late'], 7);
    settled.add(alive, ['other'], 1);
    plain.add(clients, ['late'], 7);
    plain.add(alive, ['other'], 1);
    expect(settled.render()).toEqual(plain.render());
    expect(cache.size).toBeGreaterThan(0);
  });

  it('cuts the arrays of a family that outgrew its expected size at settle(), and renders the same', () => {
    const f = new FamilyState(status, -1, 100);
    const blocks = Array.from({ length: 101 }, (_, i) => Buffer.from(`{s="${i}"`));
    blocks.forEach((b, i) => f.push(b, i, i % 2 === 0 ? Buffer.from(',status="running"}') : undefined));
    expect(f.values.length).toBe(200);
    f.trim();
    expect([f.values.length, f.blocks.length, f.suffixes?.length]).toEqual([101, 101, 101]);
    expect([...f.values]).toEqual(blocks.map((_, i) => i));
    expect(f.blocks).toEqual(blocks);
    // Within an eighth of its samples, a family keeps its arrays.
    const near = new FamilyState(status, -1, 100);
    for (let i = 0; i < 96; i++) near.push(blocks[i]!, i);
    near.trim();
    expect(near.values.length).toBe(100);

    // Through the writer: made for 40 samples a family, given 101, then one more after settle().
    const write = (w: SeriesWriter) => {
      for (let i = 0; i < 101; i++) {
        w.add(clients, [`s${i}`], i);
        w.add(status, [`s${i}`, i % 3 === 0 ? 'running' : 'stopped'], 1);
      }
    };
    const sizes = new Map([[clients.name, 40], [status.name, 40]]);
    const plain = new SeriesWriter([['server', 's']]);
    const settled = new SeriesWriter([['server', 's']], Number.POSITIVE_INFINITY, sizes);
    write(plain);
    write(settled);
    settled.settle();
    expect(settled.render()).toEqual(plain.render());
    plain.add(clients, ['late'], 7);
    settled.add(clients, ['late'], 7);
    expect(settled.render()).toEqual(plain.render());
  });

  it('a family first written after its turn to be shed has passed is shed from its first series', () => {
    const w = new SeriesWriter([['server', 's']], 2);
    w.add(alive, ['a'], 1);
    w.add(delay, ['a'], 1);
    w.add(clients, ['a'], 1); // over: delay goes (and the optional families before it)
    w.add(trackInfo, ['a', 'v', 'video', '', '', '', ''], 1);
    expect(w.shed).toEqual(new Map([[delay.name, 1], [trackInfo.name, 1]]));
    expect(w.series).toBe(2);
  });
});

describe('SeriesWriter output bytes', () => {
  it('writes numbers as Prometheus parses them', () => {
    const w = new SeriesWriter([['server', 's']]);
    // A family that takes any finite number (real families refuse negatives and more: ranges.ts).
    const anyFinite = { ...clients, range: { min: -Infinity, max: Infinity } };
    const values = [0, -0, 7, -42, 1234567890123, 99999999999999, 1e15, -1e15, 2 ** 53, 0.1, 1 / 3, -2.5e-7, 1e21];
    values.forEach((v, i) => w.add(anyFinite, [String(i)], v));
    expect(lines(w, clients.name).map((l) => l.split(' ')[1])).toEqual(values.map((v) => formatValue(v)));
    expect([NaN, Infinity, -Infinity].map((v) => formatValue(v))).toEqual(['NaN', '+Inf', '-Inf']);
  });

  it('never writes a value that is not finite: it is refused and counted', () => {
    const w = new SeriesWriter([['server', 's']]);
    for (const v of [NaN, Infinity, -Infinity]) w.add({ ...clients, range: { min: -Infinity, max: Infinity } }, ['x'], v);
    expect([w.series, w.checks.invalid]).toEqual([0, 3]);
  });

  it('deflates each family of one or more writers as one piece on a buffer of its own, equal to the rendered text', () => {
    const w = new SeriesWriter([['server', 's']]);
    for (let i = 0; i < 20_000; i++) w.add(clients, [`stream-${i}`], i);
    w.add(alive, ['x'], 1);
    const other = new SeriesWriter([['server', 's']]); // another collector of the same poll
    other.add(alive, ['y'], 0);
    const text = (writer: SeriesWriter, family: string) => Buffer.concat(writer.render().get(family)!).toString('utf8');
    const prepared = prepareSources([w, other]);
    const inflate = (family: string) => inflateRawSync(prepared.get(family)!.deflated, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
    expect(inflate(clients.name)).toBe(text(w, clients.name));
    expect(text(w, clients.name).split('\n')).toHaveLength(20_001);
    // Over 256 KiB of text: deflated in parts as the buffer fills, joined into one piece whose
    // length and CRC are those of the whole text.
    expect(Buffer.byteLength(text(w, clients.name))).toBeGreaterThan(2 * 256 * 1024);
    expect(prepared.get(clients.name)!.bytes).toBe(Buffer.byteLength(text(w, clients.name)));
    expect(prepared.get(clients.name)!.crc).toBe(crc32(text(w, clients.name)));
    expect(prepared.get(alive.name)!.crc).toBe(crc32(text(w, alive.name) + text(other, alive.name)));
    // A family written by two collectors is one piece: both writers' lines, in writer order.
    expect(inflate(alive.name)).toBe(text(w, alive.name) + text(other, alive.name));
    // Only the deflated bytes cross to the main thread: each on an ArrayBuffer nothing else shares.
    const buffers = new Set<ArrayBufferLike>();
    for (const p of prepared.values()) {
      expect(p.deflated.byteOffset).toBe(0);
      expect(p.deflated.byteLength).toBe(p.deflated.buffer.byteLength);
      expect(buffers.has(p.deflated.buffer)).toBe(false);
      buffers.add(p.deflated.buffer);
    }
  });

  /** One poll of target `s` through `cache` at `now`: `write` adds its samples, then blocks unused for 60 s are freed. */
  const cachedPoll = (cache: LabelBlockCache, now: number, write: (w: SeriesWriter) => void): SeriesWriter => {
    const w = new SeriesWriter([['server', 's']]);
    cache.begin(w.constLabels, now);
    w.useBlockCache(cache);
    write(w);
    cache.sweep(now, 60_000);
    return w;
  };

  it('reuses the label block a cache holds for a stream, across writers, and frees unused ones', () => {
    const cache = new LabelBlockCache();
    const poll = (now: number, streams: readonly string[]) =>
      cachedPoll(cache, now, (w) => {
        for (const s of streams) {
          w.add(alive, [s], 1);
          w.add(clients, [s], 2);
        }
      });
    const first = poll(0, ['a', 'b"q']);
    expect(lines(first, clients.name)).toEqual(['flussonic_stream_clients{server="s",stream="a"} 2', 'flussonic_stream_clients{server="s",stream="b\\"q"} 2']);
    expect(cache.size).toBe(2);
    poll(30_000, ['a']);
    expect(cache.size).toBe(2);
    const third = poll(90_001, ['a']); // b"q unused since 0: freed
    expect(cache.size).toBe(1);
    expect(lines(third, alive.name)).toEqual(['flussonic_stream_alive{server="s",stream="a"} 1']);
    const other = new SeriesWriter([['server', 'other']]);
    cache.begin(other.constLabels, 90_002); // another target's labels: nothing carried over
    expect(cache.size).toBe(0);
  });

  it('gives the place of a freed block to a new stream, and each stream keeps its own block', () => {
    const cache = new LabelBlockCache();
    const poll = (now: number, streams: readonly string[]) => lines(cachedPoll(cache, now, (w) => streams.forEach((s) => w.add(clients, [s], 1))), clients.name);
    const expected = (streams: readonly string[]) => streams.map((s) => `flussonic_stream_clients{server="s",stream="${s}"} 1`);
    const rounds: (readonly string[])[] = [['a', 'b', 'c'], ['a'], ['a'], ['d', 'a', 'e', 'b'], ['b', 'c', 'd']];
    rounds.forEach((streams, i) => {
      expect(poll(i * 40_000, streams)).toEqual(expected(streams));
    });
    expect(cache.size).toBe(new Set(rounds.slice(-2).flat()).size);
  });

  it('writes families with more labels after the stream from the cached stream block, byte for byte as without the cache', () => {
    const write = (w: SeriesWriter) => {
      for (const s of ['a', 'b"q', 'ü\\n']) {
        w.add(status, [s, 'running'], 1);
        w.add(status, [s, 'odd "state"\n'], 0);
        w.add(inputActive, [s, '0'], true);
        w.add(alive, [s], 1);
      }
      return w.render();
    };
    const cache = new LabelBlockCache();
    const cached = new SeriesWriter([['server', 's']]);
    cache.begin(cached.constLabels, 0);
    cached.useBlockCache(cache);
    const withCache = write(cached);
    const plain = write(new SeriesWriter([['server', 's']]));
    expect([...withCache.keys()]).toEqual([...plain.keys()]);
    for (const [family, blocks] of plain) expect(Buffer.concat(withCache.get(family)!).toString('utf8')).toBe(Buffer.concat(blocks).toString('utf8'));
    expect(Buffer.concat(withCache.get(status.name)!).toString('utf8')).toContain('flussonic_stream_status{server="s",stream="b\\"q",status="odd \\"state\\"\\n"} 0\n');
    expect(cache.size).toBe(3); // one block per stream, shared by every family
  });

  it('renders the same text whether its arrays were made for fewer, more or as many samples as come (sizes of the last run)', () => {
    // Streams with and without a tail of further labels (status, input index), in one family or
    // several, written past the size its arrays were made for and short of it.
    const write = (w: SeriesWriter, streams: number) => {
      for (let i = 0; i < streams; i++) {
        const s = `s/${i}`;
        w.add(alive, [s], i % 2 === 0);
        w.add(clients, [s], i * 1e9 + 0.5);
        if (i % 3 === 0) w.add(status, [s, 'running'], 1);
        w.add(inputActive, [s, String(i % 2)], true);
      }
      return w;
    };
    const text = (w: SeriesWriter) => [...w.render()].map(([family, blocks]) => `${family}\n${Buffer.concat(blocks).toString('utf8')}`).join('');
    const fresh = write(new SeriesWriter([['server', 'e']]), 50);
    const sizes = fresh.sampleSizes();
    expect(Object.fromEntries(sizes)).toEqual({ [alive.name]: 50, [clients.name]: 50, [status.name]: 17, [inputActive.name]: 50 });
    for (const streams of [0, 1, 7, 50, 51, 300]) {
      const want = text(write(new SeriesWriter([['server', 'e']]), streams));
      expect(text(write(new SeriesWriter([['server', 'e']], Number.POSITIVE_INFINITY, sizes), streams))).toBe(want);
    }
  });

  it('makes a family shed in the last run no arrays, and reports no size for it', () => {
    const w = new SeriesWriter([['server', 'e']], 3);
    for (const s of ['a', 'b', 'c']) w.add(alive, [s], 1);
    w.add(inputActive, ['a', '0'], true); // over the cap: the optional family is shed
    expect(w.shed.get(inputActive.name)).toBe(1);
    expect(Object.fromEntries(w.sampleSizes())).toEqual({ [alive.name]: 3 });
  });
});
