/**
 * The worker side of an exposition: a poll's samples rendered family by family and deflated as
 * pieces of the response's gzip stream, so the serving thread only joins and sends them.
 */
import { FamilyBytes } from './family-bytes.js';
import { sameSamples, type FamilySamples } from './family-state.js';
import { joinPieces, pollPiece, type DeflatedPiece } from './gzip-stream.js';
/**
 * The upstream-derived samples of one target (server or catena) from its last good poll: per
 * family, its sample lines as blocks of UTF-8, each line ending in a newline (SeriesWriter.render()).
 */
export type TargetChunks = ReadonlyMap<string, readonly Uint8Array[]>;

/**
 * One target's exposition as it is kept and served: per family, its sample text deflated as a
 * piece of the response's gzip stream (prepareTarget). Made where the poll ran (a worker), so the
 * serving thread never compresses a target's text, and only the compressed form is kept: about a
 * thirteenth of the text's size.
 */
export type PreparedTarget = ReadonlyMap<string, DeflatedPiece>;

/** Deflates each family's blocks as one piece (tests and benchmarks that hold rendered blocks). */
export function prepareTarget(chunks: TargetChunks): PreparedTarget {
  return prepareSources([
    {
      familyNames: () => chunks.keys(),
      renderFamily: (name, into) => {
        for (const block of chunks.get(name) ?? []) into.bytes(block);
      },
    },
  ]);
}

/** Renders families of samples on demand (a SeriesWriter). */
export interface SampleSource {
  familyNames(): Iterable<string>;
  /** Writes the family's sample lines after what `into` holds. */
  renderFamily(name: string, into: FamilyBytes): void;
  /**
   * The family's samples (SeriesWriter.samplesOf()): undefined when this source has none, null
   * when they cannot be compared (lines kept as text). A source without it is never compared.
   */
  samplesOf?(name: string): FamilySamples | null | undefined;
}

/** What a RenderMemo keeps of one family. */
interface Remembered {
  /** CRC-32 and length of the text last written. */
  crc: number;
  bytes: number;
  /** Once the text came out the same twice in a row: the samples it was written from (per source) and its piece. */
  kept: { readonly samples: readonly (FamilySamples | undefined)[]; readonly piece: DeflatedPiece } | undefined;
}

/**
 * A piece on a buffer of its own: one the memo keeps, or one it sends (sending transfers the
 * buffer). Copied by the Uint8Array constructor: a piece zlib made may be a Buffer, whose slice()
 * is a view of the same memory, detached with it when that piece is sent.
 */
const copyOf = (piece: DeflatedPiece): DeflatedPiece => ({ ...piece, deflated: new Uint8Array(piece.deflated) });

/**
 * One target's families as last rendered, so that a family whose samples did not change is not
 * written and deflated again: its last piece is sent once more. Many of a server's families keep
 * their values from poll to poll (a stream's status, start time, inputs, transcoder flags), and
 * comparing a family's samples costs far less than writing and deflating them.
 *
 * Only a family that came out the same twice in a row (the CRC and length of its text) is
 * remembered whole: its samples, compared exactly on the next render (blocks by identity,
 * values by their bits), and a copy of its piece. A family that changes each poll costs one
 * comparison of CRCs and keeps nothing.
 */
export class RenderMemo {
  private readonly families = new Map<string, Remembered>();
  /** Families sent again from the memo, and families written, over this memo's life (tests, profiles). */
  reused = 0;
  written = 0;

  /** The piece to send for `name`, when its samples are those it was last written from. */
  reuse(name: string, samples: readonly (FamilySamples | undefined)[] | null): DeflatedPiece | undefined {
    const kept = this.families.get(name)?.kept;
    if (kept === undefined || samples === null || !sameSources(kept.samples, samples)) return undefined;
    this.reused++;
    return copyOf(kept.piece);
  }

  /** Notes the piece just written for `name` from `samples`. */
  remember(name: string, piece: DeflatedPiece, samples: readonly (FamilySamples | undefined)[] | null): void {
    this.written++;
    const last = this.families.get(name);
    if (samples === null) {
      this.families.delete(name);
      return;
    }
    const again = last !== undefined && last.crc === piece.crc && last.bytes === piece.bytes;
    this.families.set(name, { crc: piece.crc, bytes: piece.bytes, kept: again ? { samples, piece: copyOf(piece) } : undefined });
  }

  /** Forgets the families a render no longer had. */
  keepOnly(names: ReadonlySet<string>): void {
    for (const name of this.families.keys()) if (!names.has(name)) this.families.delete(name);
  }
}

function sameSources(a: readonly (FamilySamples | undefined)[], b: readonly (FamilySamples | undefined)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined ? x !== y : !sameSamples(x, y)) return false;
  }
  return true;
}

/** Each source's samples of a family, or null when any source cannot compare its own. */
function samplesOf(sources: readonly SampleSource[], name: string): (FamilySamples | undefined)[] | null {
  const out: (FamilySamples | undefined)[] = [];
  for (const source of sources) {
    if (source.samplesOf === undefined) return null;
    const samples = source.samplesOf(name);
    if (samples === null) return null;
    out.push(samples);
  }
  return out;
}

/**
 * The text rendered is deflated every 256 KiB (at a line's end) rather than a family at a time: the
 * buffer stays that size however large a family grows (a family of 100,000 sessions groups is 4 MB
 * of text), and the pieces of one family are joined once deflated (an eighth of the size).
 */
const SPILL_BYTES = 256 * 1024;
const rendering = new FamilyBytes();
const spilled: DeflatedPiece[] = [];
rendering.spillTo((bytes) => spilled.push(pollPiece(bytes)), SPILL_BYTES);

/**
 * The prepared exposition of one poll's sources (its collectors' writers): each family rendered
 * from every source that has it, into one buffer reused for every family, and deflated from there
 * as it fills. Only the compressed pieces remain.
 */
export function prepareSources(sources: readonly SampleSource[], memo?: RenderMemo): PreparedTarget {
  const out = new Map<string, DeflatedPiece>();
  const names = new Set<string>();
  for (const source of sources) for (const name of source.familyNames()) names.add(name);
  for (const name of names) {
    const samples = memo === undefined ? null : samplesOf(sources, name);
    const again = memo?.reuse(name, samples);
    if (again !== undefined) {
      out.set(name, again);
      continue;
    }
    spilled.length = 0;
    rendering.reset();
    for (const source of sources) source.renderFamily(name, rendering);
    rendering.spill();
    if (spilled.length === 0) continue;
    const piece = spilled.length === 1 ? { ...spilled[0]!, deflated: ownBuffer(spilled[0]!.deflated) } : joinPieces(spilled);
    memo?.remember(name, piece, samples);
    out.set(name, piece);
  }
  spilled.length = 0;
  memo?.keepOnly(names);
  return out;
}

/**
 * Every family of `source` in one piece, in its order: written into the same buffer, one family
 * after the other, and deflated 256 KiB at a time, not a family at a time (the event series: a
 * dozen families, most of them a few lines).
 */
export function prepareJoined(source: SampleSource): DeflatedPiece {
  spilled.length = 0;
  rendering.reset();
  for (const name of source.familyNames()) source.renderFamily(name, rendering);
  rendering.spill();
  const piece = joinPieces(spilled);
  spilled.length = 0;
  return piece;
}

/**
 * The bytes in a Uint8Array that alone spans its ArrayBuffer, so it can be transferred to another
 * thread: kept when it already does, copied once when it is a slice (of Node's shared Buffer pool
 * or of a larger zlib buffer).
 */
export function ownBuffer(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes;
  return new Uint8Array(bytes);
}

