/** crc32 combine: the CRC of a concatenation from its pieces' CRCs equals zlib's CRC of the bytes. */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { combineCrc, shiftOf } from '../../src/render/crc32.js';

describe('combineCrc', () => {
  it('matches zlib.crc32 of the joined bytes for pieces of many sizes, empty ones included', () => {
    const sizes = [0, 1, 2, 7, 8, 255, 256, 1000, 4096, 65_537, 0, 3];
    const pieces = sizes.map((n) => randomBytes(n));
    let crc = 0;
    for (const p of pieces) crc = combineCrc(crc, crc32(p), shiftOf(p.length));
    expect(crc).toBe(crc32(Buffer.concat(pieces)));
  });

  it('is the identity for an empty second piece', () => {
    const a = randomBytes(100);
    expect(combineCrc(crc32(a), 0, shiftOf(0))).toBe(crc32(a));
  });
});
