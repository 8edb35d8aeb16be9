/**
 * The worker side of an exposition: a poll's samples rendered family by family and deflated as
 * pieces of the response's gzip stream, so the serving thread only joins and sends them.
 */
import { FamilyBytes } from './family-bytes.js';
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
export function prepareSources(sources: readonly SampleSource[]): PreparedTarget {
  const out = new Map<string, DeflatedPiece>();
  const names = new Set<string>();
  for (const source of sources) for (const name of source.familyNames()) names.add(name);
  for (const name of names) {
    spilled.length = 0;
    rendering.reset();
    for (const source of sources) source.renderFamily(name, rendering);
    rendering.spill();
    if (spilled.length === 0) continue;
    out.set(name, spilled.length === 1 ? { ...spilled[0]!, deflated: ownBuffer(spilled[0]!.deflated) } : joinPieces(spilled));
  }
  spilled.length = 0;
  return out;
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

