/**
 * Label values are capped where they are written (max_label_value_bytes, default 256 UTF-8
 * bytes): a longer value is cut at a character boundary and ends in `~` and 8 hex digits of a
 * hash of the whole value, so distinct long values stay distinct series; counted per family.
 */
import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/serve/catalogue.js';
import { LabelBlockCache } from '../../src/render/label-blocks.js';
import { SeriesWriter } from '../../src/render/series.js';

const clients = familyByName('flussonic_stream_clients');
const status = familyByName('flussonic_stream_status');

function lines(w: SeriesWriter, family: string): string[] {
  return Buffer.concat(w.render().get(family) ?? []).toString('utf8').split('\n').filter(Boolean);
}

/** The value of label `name` in an exposition line. */
function labelOf(line: string, name: string): string {
  const match = new RegExp(`${name}="((?:[^"\\\\]|\\\\.)*)"`).exec(line);
  if (!match) throw new Error(`no ${name} in ${line.slice(0, 200)}`);
  return match[1]!;
}

describe('label value cap', () => {
  const common = 'live/'.padEnd(400, 'x');
  const longA = `${common}-a`;
  const longB = `${common}-b`;

  it.each([
    ['without', undefined],
    ['with', new LabelBlockCache()],
  ])('cuts long stream names to 256 bytes with distinct hash suffixes (%s the block cache)', (_, cache) => {
    const w = new SeriesWriter([['server', 'edge-1']]);
    if (cache) {
      cache.begin(w.constLabels, 0);
      w.useBlockCache(cache);
    }
    w.add(clients, [longA], 1);
    w.add(clients, [longB], 2);
    w.add(clients, ['short'], 3);
    const [a, b, short] = lines(w, clients.name);
    const streamA = labelOf(a!, 'stream');
    const streamB = labelOf(b!, 'stream');
    expect(Buffer.byteLength(streamA)).toBeLessThanOrEqual(256);
    expect(Buffer.byteLength(streamB)).toBeLessThanOrEqual(256);
    expect(streamA).toMatch(/^live\/x+~[0-9a-f]{8}$/);
    expect(streamA).not.toBe(streamB);
    expect(streamA.slice(0, -9)).toBe(streamB.slice(0, -9));
    expect(labelOf(short!, 'stream')).toBe('short');
    expect(w.truncated).toEqual(new Map([[clients.name, 2]]));
  });

  it('gives the same value the same suffix on every poll', () => {
    const write = () => {
      const w = new SeriesWriter([['server', 'edge-1']]);
      w.add(clients, [longA], 1);
      return labelOf(lines(w, clients.name)[0]!, 'stream');
    };
    expect(write()).toBe(write());
  });

  it('cuts at a UTF-8 character boundary', () => {
    const w = new SeriesWriter([['server', 'edge-1']]);
    w.add(clients, ['é'.repeat(300)], 1);
    const stream = labelOf(lines(w, clients.name)[0]!, 'stream');
    expect(stream).not.toContain('\uFFFD');
    expect(stream).toMatch(/^(é)+~[0-9a-f]{8}$/);
    expect(Buffer.byteLength(stream)).toBeLessThanOrEqual(256);
  });

  it('caps every label value of a series and counts each family', () => {
    const w = new SeriesWriter([['server', 'edge-1']], Number.POSITIVE_INFINITY, undefined, 64);
    w.add(status, ['s', 'x'.repeat(100)], 1);
    w.add(clients, ['y'.repeat(65)], 1);
    expect(labelOf(lines(w, status.name)[0]!, 'status')).toMatch(/^x{55}~[0-9a-f]{8}$/);
    expect(labelOf(lines(w, clients.name)[0]!, 'stream')).toMatch(/^y{55}~[0-9a-f]{8}$/);
    expect(w.truncated).toEqual(new Map([[status.name, 1], [clients.name, 1]]));
  });

  it('leaves a value of exactly the cap alone', () => {
    const w = new SeriesWriter([['server', 'edge-1']]);
    const exact = 'z'.repeat(256);
    w.add(clients, [exact], 1);
    expect(labelOf(lines(w, clients.name)[0]!, 'stream')).toBe(exact);
    expect(w.truncated.size).toBe(0);
  });
});
