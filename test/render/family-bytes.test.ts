import { describe, expect, it } from 'vitest';
import { FamilyBytes, formatValue } from '../../src/render/family-bytes.js';

describe('FamilyBytes', () => {
  it('spills at the end of a line once the threshold is passed, never inside a line', () => {
    const out = new FamilyBytes();
    const spills: string[] = [];
    out.spillTo((bytes) => spills.push(Buffer.from(bytes).toString('utf8')), 100);
    const lines = Array.from({ length: 25 }, (_, i) => `line_${String(i).padStart(2, '0')}{a="${'x'.repeat(i)}"} ${i}\n`);
    for (const line of lines) {
      // Written in parts, as a renderer does: a spill may come only at endLine().
      out.ascii(line.slice(0, 5));
      expect(out.length).toBeLessThan(100 + line.length);
      out.utf8(line.slice(5));
      out.endLine();
    }
    out.spill();
    expect(spills.join('')).toBe(lines.join(''));
    expect(spills.length).toBeGreaterThan(3);
    for (const s of spills.slice(0, -1)) {
      expect(s.endsWith('\n')).toBe(true);
      expect(Buffer.byteLength(s)).toBeGreaterThanOrEqual(100);
    }
    // Spilling an empty buffer hands nothing over.
    out.spill();
    expect(spills.join('')).toBe(lines.join(''));
  });

  it('keeps everything without a sink, and starts again empty after reset()', () => {
    const out = new FamilyBytes();
    for (let i = 0; i < 1000; i++) {
      out.ascii('abcdefgh');
      out.endLine();
    }
    expect(out.length).toBe(8000);
    out.reset();
    out.value(1234567890123);
    expect(Buffer.from(out.view()).toString()).toBe('1234567890123');
  });

  it('writes every kind of number as String() does (integers of every length and sign, fractions, the 10^15 edge)', () => {
    const next = xorshift(0x2545f491);
    const values = [0, -0, 1, 9, 10, 99, 100, 2 ** 31 - 1, 2 ** 31, -1, -(2 ** 31), -(2 ** 31) - 1, 1e8, 1e8 + 1, 1e15 - 1, -(1e15 - 1), 1e15, 2 ** 53, 1e21, 0.5, 5e-324];
    for (let i = 0; i < 20_000; i++) {
      const digits = Math.floor(next() * 16);
      const n = Math.floor(next() * 10 ** digits);
      values.push(next() < 0.2 ? -n : n, n + 0.25);
    }
    const out = new FamilyBytes();
    for (const v of values) {
      out.reset();
      out.value(v);
      expect(Buffer.from(out.view()).toString('latin1'), String(v)).toBe(String(v));
    }
  });

  it('writes a sample line as name, block (its `}` left to a suffix), value and newline, for every kind of number', () => {
    const next = xorshift(0x1b873593);
    const values = [0, -0, 1, 9, 10, 99, 2 ** 31 - 1, 2 ** 31, -1, -(2 ** 31), 1e15 - 1, 1e15, 2 ** 53, 1e21, 0.5, -0.5, 5e-324, NaN, Infinity, -Infinity];
    for (let i = 0; i < 5000; i++) {
      const n = Math.floor(next() * 10 ** Math.floor(next() * 13));
      values.push(n, -n, n / 8);
    }
    // Names and blocks on both sides of the 16 bytes up to which a loop copies instead of set().
    const names = ['up', 'flussonic_stream_bitrate_bytes_per_second'];
    const blocks = ['', '{a="b"}', '{server="edge-1",stream="sport/ch-0914"}'];
    const suffixes = [undefined, ',s="x"}', ',status="running",index="12"}'];
    const out = new FamilyBytes();
    let expected = '';
    let k = 0;
    for (const v of values) {
      const name = names[k % names.length]!;
      const block = blocks[k % blocks.length]!;
      const suffix = block === '' ? undefined : suffixes[(k >> 1) % suffixes.length];
      k++;
      out.sampleLine(Buffer.from(name), Buffer.from(block), suffix === undefined ? undefined : Buffer.from(suffix), v);
      expected += `${name}${suffix === undefined ? block : block.slice(0, -1) + suffix} ${formatValue(v)}\n`;
    }
    expect(Buffer.from(out.view()).toString('latin1')).toBe(expected);
  });
});

/** A fixed pseudo-random sequence in [0, 1) (xorshift), so a failure repeats. */
function xorshift(seed: number): () => number {
  return () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
}
