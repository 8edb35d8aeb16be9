/**
 * One gzip stream built from pieces compressed apart. The exposition is kept per target and
 * family; each piece is deflated once, where it is made (in a worker), as raw deflate ended with
 * Z_SYNC_FLUSH, or stored as it is when short (pollPiece): no final block, byte-aligned, no
 * reference to earlier data, so pieces can follow each other in any order and still form one valid
 * deflate stream. A response is then
 *
 *   gzip header | piece | ... | piece of event series | self-metrics (final block) | CRC-32 | ISIZE
 *
 * The CRC of the whole comes from the pieces' CRCs (src/render/crc32.ts), so the serving thread
 * compresses per scrape only the small self-metrics (and the event series once per change), and
 * never reads the large text again. Every decoder (curl, browsers, Go's and Node's gunzip) sees
 * one gzip member.
 */
import { pipeline, Readable } from 'node:stream';
import { constants, crc32, createGunzip, deflateRawSync, gunzipSync } from 'node:zlib';
import { combineCrc, shiftOf } from './crc32.js';

/**
 * One piece of exposition text in its deflated form only: the text itself is not kept (a plain
 * response inflates it again; see plainStream()), so a target costs its compressed size in memory.
 */
export interface DeflatedPiece {
  /** Raw deflate of the text, sync-flushed (not final). */
  readonly deflated: Uint8Array;
  /** CRC-32 of the text. */
  readonly crc: number;
  /** Length of the text in bytes. */
  readonly bytes: number;
  /** shiftOf(bytes). */
  readonly shift: number;
}

/**
 * Level 1: a third of the CPU of the default level for about 8% more bytes on exposition text
 * (measured on 4 MB: 16 ms vs 50 ms).
 */
export const GZIP_LEVEL = 1;

export function deflatePiece(plain: Uint8Array): DeflatedPiece {
  return pieceOf(plain, deflateRawSync(plain, { level: GZIP_LEVEL, finishFlush: constants.Z_SYNC_FLUSH }));
}

/** `plain` in its compressed form `deflated`, with the CRC and length of its text. */
function pieceOf(plain: Uint8Array, deflated: Uint8Array): DeflatedPiece {
  return { deflated, crc: crc32(plain), bytes: plain.length, shift: shiftOf(plain.length) };
}

/**
 * Text shorter than this is stored in its piece as it is (a deflate stored block) when made per
 * poll: most families of a small server are a line or two (27 of 44 below 256 bytes at 100
 * streams), and a zlib stream costs more to set up than deflating so little saves.
 */
export const STORE_BELOW = 256;

/** A piece of text made every poll: stored when shorter than STORE_BELOW, deflated otherwise. */
export function pollPiece(plain: Uint8Array): DeflatedPiece {
  return plain.length < STORE_BELOW ? pieceOf(plain, storedBlock(plain)) : deflatePiece(plain);
}

/**
 * `plain` as one non-final stored block (RFC 1951 3.2.4): it starts and ends on a byte boundary
 * with no reference to other data, as a sync-flushed piece does. At most 65,535 bytes.
 */
function storedBlock(plain: Uint8Array): Uint8Array {
  const n = plain.length;
  const out = new Uint8Array(5 + n);
  // Byte 0: BFINAL 0 and BTYPE 00, padded to the byte boundary. Then LEN and NLEN, little-endian.
  out[1] = n & 0xff;
  out[2] = n >>> 8;
  out[3] = ~n & 0xff;
  out[4] = (~n >>> 8) & 0xff;
  out.set(plain, 5);
  return out;
}

/** What a run of pieces adds up to: the CRC and length of their text. */
export interface PiecesSummary {
  readonly crc: number;
  readonly bytes: number;
}

export function summarise(pieces: Iterable<DeflatedPiece>): PiecesSummary {
  let crc = 0;
  let bytes = 0;
  for (const p of pieces) {
    crc = combineCrc(crc, p.crc, p.shift);
    bytes += p.bytes;
  }
  return { crc, bytes };
}

/**
 * One piece made of several, in order: their deflated bytes joined into one buffer of its own (a
 * valid deflate run, each ending byte-aligned), the CRC and length of their text combined.
 */
export function joinPieces(pieces: readonly DeflatedPiece[]): DeflatedPiece {
  let size = 0;
  for (const p of pieces) size += p.deflated.length;
  const deflated = new Uint8Array(size);
  let at = 0;
  for (const p of pieces) {
    deflated.set(p.deflated, at);
    at += p.deflated.length;
  }
  const { crc, bytes } = summarise(pieces);
  return { deflated, crc, bytes, shift: shiftOf(bytes) };
}

/** gzip magic, CM deflate, no flags, no mtime, XFL 0, OS unknown (RFC 1952). */
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/** The end of a gzip stream: text compressed as the final deflate block. */
export interface FinalPiece {
  readonly deflated: Uint8Array;
  readonly crc: number;
  readonly shift: number;
  readonly bytes: number;
}

export function finalPiece(tail: Uint8Array): FinalPiece {
  return pieceOf(tail, deflateRawSync(tail, { level: GZIP_LEVEL }));
}

/** `tail` preceded by `piece`: one final piece, their deflated bytes copied into one buffer. */
export function precede(piece: DeflatedPiece, tail: FinalPiece): FinalPiece {
  const deflated = new Uint8Array(piece.deflated.length + tail.deflated.length);
  deflated.set(piece.deflated, 0);
  deflated.set(tail.deflated, piece.deflated.length);
  const bytes = piece.bytes + tail.bytes;
  return { deflated, crc: combineCrc(piece.crc, tail.crc, tail.shift), bytes, shift: shiftOf(bytes) };
}

/**
 * The parts of one gzip member: the header, the deflated pieces as they are (never copied), the
 * final piece, and the trailer.
 */
export function gzipMember(pieces: readonly Uint8Array[], summary: PiecesSummary, tail: FinalPiece): Uint8Array[] {
  const crc = combineCrc(summary.crc, tail.crc, tail.shift);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc, 0);
  trailer.writeUInt32LE((summary.bytes + tail.bytes) % 2 ** 32, 4);
  return [HEADER, ...pieces, tail.deflated, trailer];
}

/**
 * The text of a gzip member made by gzipMember(), inflated as it is sent (zlib's thread pool, not
 * the serving thread): a plain-text scrape costs one inflate, and no copy of the text is kept. The
 * gunzip checks the CRC and length, so a piece that does not match its text fails the response.
 */
export function plainStream(member: readonly Uint8Array[]): Readable {
  // An error (never expected: the pieces were made here) destroys the gunzip, which ends the response.
  return pipeline(Readable.from(member, { objectMode: false }), createGunzip(), () => undefined);
}

/** The text of a gzip member made by gzipMember(), at once (tests, small bodies). */
export function plainText(member: readonly Uint8Array[]): string {
  return gunzipSync(Buffer.concat(member)).toString('utf8');
}
