/**
 * RenderMemo (src/render/prepare.ts): a family whose samples are those it was last written from is
 * sent again as its last piece, and anything that changes what it writes (a value, a stream, a
 * state, histogram text) is written again. Every piece is checked against the text a fresh
 * render writes, so a stale piece fails whatever the counters say.
 */
import { createHash } from 'node:crypto';
import { constants, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/serve/catalogue.js';
import { sameSamples } from '../../src/render/family-state.js';
import { LabelBlockCache } from '../../src/render/label-blocks.js';
import { prepareSources, RenderMemo, type PreparedTarget } from '../../src/render/prepare.js';
import { SeriesWriter } from '../../src/render/series.js';

const clients = familyByName('flussonic_stream_clients');
const status = familyByName('flussonic_stream_status');
const duration = familyByName('flussonic_session_duration_seconds');

type Streams = ReadonlyMap<string, { clients: number; status: string }>;

/** One poll of server `s`: its streams' clients and status, through the block cache a collector keeps. */
function poll(cache: LabelBlockCache, streams: Streams, now: number): SeriesWriter {
  const w = new SeriesWriter([['server', 's']]);
  cache.begin(w.constLabels, now);
  w.useBlockCache(cache);
  for (const [name, s] of streams) {
    w.add(clients, [name], s.clients);
    for (const state of ['running', 'waiting']) w.add(status, [name, state], s.status === state);
  }
  w.settle();
  return w;
}

const inflate = (prepared: PreparedTarget, family: string) => inflateRawSync(prepared.get(family)!.deflated, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
const fresh = (w: SeriesWriter, family: string) => Buffer.concat(w.render().get(family) ?? []).toString('utf8');

function streams(n: number, clientsOf: (i: number) => number = () => 3): Map<string, { clients: number; status: string }> {
  const out = new Map<string, { clients: number; status: string }>();
  for (let i = 0; i < n; i++) out.set(`live/ch-${i}`, { clients: clientsOf(i), status: i % 7 === 0 ? 'waiting' : 'running' });
  return out;
}

/** Renders `w` through `memo` and checks every family against a fresh render of it. */
function render(w: SeriesWriter, memo: RenderMemo): PreparedTarget {
  const prepared = prepareSources([w], memo);
  for (const family of [clients.name, status.name]) if (prepared.has(family)) expect(inflate(prepared, family), family).toBe(fresh(w, family));
  return prepared;
}

describe('RenderMemo', () => {
  it('sends a family whose samples did not change again without writing it, from its third render on', () => {
    const cache = new LabelBlockCache();
    const memo = new RenderMemo();
    const world = streams(500);
    render(poll(cache, world, 0), memo);
    render(poll(cache, world, 1000), memo);
    // Two renders of the same text: both families are remembered, nothing was sent again yet.
    expect([memo.written, memo.reused]).toEqual([4, 0]);
    const third = render(poll(cache, world, 2000), memo);
    const fourth = render(poll(cache, world, 3000), memo);
    expect([memo.written, memo.reused]).toEqual([4, 4]);
    // Each render's pieces are buffers of their own (they are transferred to the main thread).
    expect(fourth.get(status.name)!.deflated.buffer).not.toBe(third.get(status.name)!.deflated.buffer);
    expect(Buffer.from(fourth.get(status.name)!.deflated)).toEqual(Buffer.from(third.get(status.name)!.deflated));
  });

  it('keeps its own copy of a piece that is sent, even one zlib made on a buffer of its own (deflated beyond 16 KiB)', () => {
    const cache = new LabelBlockCache();
    const memo = new RenderMemo();
    // Names that compress badly: the status family deflates to more than zlib's 16 KiB output
    // chunk (a Buffer that alone spans its ArrayBuffer) in one spill of text (under 256 KiB).
    const world = new Map<string, { clients: number; status: string }>();
    for (let i = 0; i < 1200; i++) world.set(`live/${createHash('sha256').update(String(i)).digest('hex').slice(0, 24)}`, { clients: 3, status: 'running' });
    for (let i = 0; i < 4; i++) {
      const prepared = render(poll(cache, world, i * 1000), memo);
      const piece = prepared.get(status.name)!;
      if (i === 0) expect(piece.deflated.length).toBeGreaterThan(16 * 1024);
      // Sent as the worker sends them: every piece's buffer transferred, so detached here.
      structuredClone([...prepared.values()].map((p) => p.deflated), { transfer: [...new Set([...prepared.values()].map((p) => p.deflated.buffer as ArrayBuffer))] });
      expect(piece.deflated.byteLength).toBe(0);
    }
    expect(memo.reused).toBeGreaterThanOrEqual(2);
  });

  it('writes a family again when a value, a state, a stream or the order of its streams changes', () => {
    const cache = new LabelBlockCache();
    const memo = new RenderMemo();
    let world = streams(300);
    let now = 0;
    const settle = () => {
      for (let i = 0; i < 3; i++) render(poll(cache, world, (now += 1000)), memo);
    };
    const changes: [string, (w: Map<string, { clients: number; status: string }>) => Map<string, { clients: number; status: string }>][] = [
      ['one value', (w) => new Map([...w].map(([k, v], i) => [k, i === 150 ? { ...v, clients: v.clients + 1 } : v]))],
      ['one state', (w) => new Map([...w].map(([k, v], i) => [k, i === 299 ? { ...v, status: v.status === 'running' ? 'waiting' : 'running' } : v]))],
      ['a stream added', (w) => new Map([...w, ['live/new', { clients: 3, status: 'running' }]])],
      ['a stream removed', (w) => new Map([...w].filter(([k]) => k !== 'live/ch-10'))],
      ['two streams swapped', (w) => { const e = [...w]; [e[1], e[2]] = [e[2]!, e[1]!]; return new Map(e); }],
    ];
    for (const [what, change] of changes) {
      settle();
      const before = memo.written;
      world = change(world);
      // render() fails here if a remembered piece were sent for what changed.
      const w = poll(cache, world, (now += 1000));
      render(w, memo);
      expect(memo.written - before, what).toBeGreaterThanOrEqual(1);
    }
  });

  it('tells 0 from -0 and takes every NaN for the same value, as the text does', () => {
    const block = new Uint8Array([1]);
    const of = (v: number) => ({ count: 1, blocks: [block], suffixes: undefined, values: new Float64Array([v]) });
    expect(sameSamples(of(0), of(-0))).toBe(false);
    expect(sameSamples(of(Number.NaN), of(Number.NaN))).toBe(true);
    expect(sameSamples(of(1), of(1))).toBe(true);
    expect(sameSamples(of(1), { ...of(1), blocks: [new Uint8Array([1])] })).toBe(false);
  });

  it('never remembers a family with lines kept as text, and forgets families a render no longer has', () => {
    const memo = new RenderMemo();
    const histogram = { buckets: [1, 10], cumulativeCounts: [1, 2], sum: 5, count: 2 };
    const cache = new LabelBlockCache();
    for (let i = 0; i < 4; i++) {
      const w = poll(cache, streams(10), i * 1000);
      w.addHistogram(duration, ['hls'], histogram);
      const prepared = prepareSources([w], memo);
      expect(inflate(prepared, duration.name)).toBe(fresh(w, duration.name));
    }
    // The histogram family was written each time; the other two from the third render on were not.
    expect([memo.written, memo.reused]).toEqual([2 * 2 + 4, 2 * 2]);
    // A render without the stream families: they are forgotten, and written again when they return.
    prepareSources([new SeriesWriter([['server', 's']])], memo);
    const back = memo.written;
    render(poll(cache, streams(10), 9000), memo);
    expect(memo.written - back).toBe(2);
  });
});
