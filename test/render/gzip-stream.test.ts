import { describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { deflatePiece, finalPiece, gzipMember, joinPieces, plainStream, pollPiece, precede, STORE_BELOW, summarise } from '../../src/render/gzip-stream.js';

const text = (n: number, seed = 0) => {
  let s = '';
  for (let i = 0; s.length < n; i++) s += `flussonic_stream_bitrate{server="edge-${seed}",name="s${i}"} ${i * 7 + seed}\n`;
  return new TextEncoder().encode(s.slice(0, n));
};

async function streamed(member: Uint8Array[]): Promise<string> {
  const out: Buffer[] = [];
  for await (const chunk of plainStream(member)) out.push(chunk as Buffer);
  return Buffer.concat(out).toString('utf8');
}

describe('pollPiece and deflatePiece', () => {
  it('stores a text below STORE_BELOW as it is, and deflates a longer one; deflatePiece always deflates', () => {
    const short = text(STORE_BELOW - 1);
    const stored = pollPiece(short);
    expect(stored.deflated.length).toBe(short.length + 5);
    expect(stored.deflated[0]).toBe(0);
    expect(Buffer.from(stored.deflated.subarray(5)).equals(Buffer.from(short))).toBe(true);
    const long = text(STORE_BELOW * 8);
    const deflated = pollPiece(long);
    expect(deflated.deflated.length).toBeLessThan(long.length / 2);
    expect(deflated.bytes).toBe(long.length);
    expect(deflatePiece(short).deflated[0]).not.toBe(0);
  });

  it('makes pieces that, stored or deflated, in any order, form one gzip member of their texts', async () => {
    const texts = [text(0), text(1, 1), text(STORE_BELOW - 1, 2), text(STORE_BELOW, 3), text(40_000, 4), text(17, 5), text(STORE_BELOW + 1, 6)];
    const pieces = texts.map((t, i) => (i % 3 === 2 ? deflatePiece(t) : pollPiece(t)));
    const order = [4, 2, 0, 6, 1, 5, 3];
    const chosen = order.map((i) => pieces[i]!);
    const tail = finalPiece(new TextEncoder().encode('# EOF\n'));
    const member = gzipMember(chosen.map((p) => p.deflated), summarise(chosen), tail);
    const expected = order.map((i) => Buffer.from(texts[i]!).toString('utf8')).join('') + '# EOF\n';
    // gunzip checks the CRC-32 and length of the whole against the trailer.
    expect(gunzipSync(Buffer.concat(member)).toString('utf8')).toBe(expected);
    expect(await streamed(member)).toBe(expected);
    // Joined pieces are one piece of the same text.
    const joined = joinPieces(chosen);
    expect(gunzipSync(Buffer.concat(gzipMember([joined.deflated], summarise([joined]), tail))).toString('utf8')).toBe(expected);
  });

  it('fails the gunzip when a stored piece does not match its text', () => {
    const piece = pollPiece(text(100));
    const tampered = new Uint8Array(piece.deflated);
    tampered[10] = tampered[10]! ^ 1;
    const tail = finalPiece(new Uint8Array(0));
    expect(() => gunzipSync(Buffer.concat(gzipMember([tampered], summarise([piece]), tail)))).toThrow();
  });
});

describe('precede', () => {
  it('puts a piece before a final piece: one final piece of both texts, after any other pieces', async () => {
    const body = [text(3_000, 1), text(STORE_BELOW - 1, 2)];
    const pieces = body.map((t) => pollPiece(t));
    const events = text(20_000, 3);
    const own = new TextEncoder().encode('# self\nflussonic_exporter_up 1\n');
    const tail = precede(deflatePiece(events), finalPiece(own));
    expect(tail.bytes).toBe(events.length + own.length);
    const member = gzipMember(pieces.map((p) => p.deflated), summarise(pieces), tail);
    const expected = [...body, events, own].map((t) => Buffer.from(t).toString('utf8')).join('');
    expect(gunzipSync(Buffer.concat(member)).toString('utf8')).toBe(expected);
    expect(await streamed(member)).toBe(expected);
    // The CRC is the whole text's: a tail whose CRC left out the piece fails the gunzip.
    const wrong = { ...tail, crc: finalPiece(own).crc };
    expect(() => gunzipSync(Buffer.concat(gzipMember(pieces.map((p) => p.deflated), summarise(pieces), wrong)))).toThrow();
  });
});
