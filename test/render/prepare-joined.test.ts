/**
 * prepareJoined (src/render/prepare.ts): every family of a source in one piece, in the source's
 * order, deflated 256 KiB of text at a time; families that write nothing leave nothing.
 */
import { constants, crc32, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { FamilyBytes } from '../../src/render/family-bytes.js';
import { prepareJoined, type SampleSource } from '../../src/render/prepare.js';

/** A source of families written line by line, as the event series are. */
function source(families: [string, string[]][]): SampleSource {
  const byName = new Map(families);
  return {
    familyNames: () => byName.keys(),
    renderFamily: (name: string, into: FamilyBytes) => {
      for (const line of byName.get(name) ?? []) {
        into.utf8(line);
        into.endLine();
      }
    },
  };
}

const inflate = (deflated: Uint8Array) => inflateRawSync(deflated, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');

describe('prepareJoined', () => {
  it('joins the families in order into one piece of their text, over several spills', () => {
    const big = Array.from({ length: 12_000 }, (_, i) => `a_total{server="edge-1",stream="s-${i}"} ${i}\n`);
    const families: [string, string[]][] = [['a_total', big], ['empty', []], ['b', ['b{server="édge"} 1.5\n']], ['c', ['c 0\n']]];
    const text = big.join('') + 'b{server="édge"} 1.5\n' + 'c 0\n';
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * 256 * 1024);
    const piece = prepareJoined(source(families));
    expect(inflate(piece.deflated)).toBe(text);
    expect(piece.bytes).toBe(Buffer.byteLength(text));
    expect(piece.crc).toBe(crc32(Buffer.from(text)));
  });

  it('makes an empty piece of a source with nothing to write', () => {
    const piece = prepareJoined(source([['empty', []]]));
    expect([piece.bytes, piece.deflated.length]).toEqual([0, 0]);
  });
});
