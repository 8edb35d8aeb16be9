import { CATALOGUE, type FamilyDef } from './catalogue.js';
import { deflatePiece, finalPiece, gzipMember, summarise, type DeflatedPiece, type FinalPiece, type PiecesSummary } from './gzip-stream.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * The upstream-derived samples of one target (server or catena) from its last good poll: per
 * family, its sample lines as blocks of UTF-8, each line ending in a newline (SeriesWriter.render()).
 */
export type TargetChunks = ReadonlyMap<string, readonly Uint8Array[]>;

/**
 * One target's exposition as it is kept and served: per family, its sample text in one buffer
 * with the deflated form (prepareTarget). Made where the poll ran (a worker), so the serving
 * thread never compresses or copies a target's text.
 */
export type PreparedTarget = ReadonlyMap<string, DeflatedPiece>;

/**
 * Joins each family's blocks into one buffer of its own (the unit that crosses threads by
 * transfer) and deflates it as a piece of the response's gzip stream.
 */
export function prepareTarget(chunks: TargetChunks): PreparedTarget {
  const out = new Map<string, DeflatedPiece>();
  for (const [family, blocks] of chunks) {
    if (blocks.length === 0) continue;
    const piece = deflatePiece(ownBuffer(blocks));
    out.set(family, { ...piece, deflated: ownBuffer([piece.deflated]) });
  }
  return out;
}

/**
 * The blocks in one Uint8Array that alone spans its ArrayBuffer, so it can be transferred to
 * another thread: a single block that already does is kept, anything else (several blocks, a
 * slice of Node's shared Buffer pool or of a larger zlib buffer) is copied once.
 */
export function ownBuffer(blocks: readonly Uint8Array[]): Uint8Array {
  const only = blocks.length === 1 ? blocks[0]! : undefined;
  if (only && only.byteOffset === 0 && only.byteLength === only.buffer.byteLength && only.buffer instanceof ArrayBuffer) return only;
  let bytes = 0;
  for (const b of blocks) bytes += b.byteLength;
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.byteLength;
  }
  return out;
}

/**
 * The exposition of all upstream series, kept per target and served from memory. The parts are
 * listed family by family in catalogue order, so that one family's series from all targets stay
 * together under one HELP/TYPE; the list is made at most once per change, when a scrape asks.
 * Self-metrics are appended per scrape by the HTTP layer (they are small): as text, or as the
 * final block of the same gzip stream (src/metrics/gzip-stream.ts).
 */
export class ExpositionCache {
  private readonly targets = new Map<string, PreparedTarget>();
  private version = 0;
  private built: BuiltExposition | undefined;
  /** HELP/TYPE lines per family, deflated once. */
  private readonly headers = new Map<string, DeflatedPiece>();

  constructor(private readonly families: readonly FamilyDef[] = CATALOGUE) {}

  /** Swaps in the blocks of one target, preparing them on this thread (tests, in-process polls). */
  swap(target: string, chunks: TargetChunks): void {
    this.swapPrepared(target, prepareTarget(chunks));
  }

  /** Swaps in the prepared exposition of one target (replacing what it had). */
  swapPrepared(target: string, prepared: PreparedTarget): void {
    this.targets.set(target, prepared);
    this.changed();
  }

  /** Withdraws every upstream series of a target (its poll failed, or it left the config). */
  withdraw(target: string): void {
    if (this.targets.delete(target)) this.changed();
  }

  /** A new version; the old ordering is dropped now, so a replaced exposition is not held until the next scrape. */
  private changed(): void {
    this.version++;
    this.built = undefined;
  }

  /** Keeps only the named targets (after a config reload). */
  retain(targets: ReadonlySet<string>): void {
    for (const name of [...this.targets.keys()]) if (!targets.has(name)) this.withdraw(name);
  }

  /**
   * One target's exposition (for /probe): HELP/TYPE and its sample text, family by family in
   * catalogue order, referenced as they are; undefined when the target has no series (not polled
   * yet, or its last poll failed).
   */
  targetParts(key: string): { readonly parts: readonly Uint8Array[]; readonly bytes: number } | undefined {
    const target = this.targets.get(key);
    if (!target) return undefined;
    const parts: Uint8Array[] = [];
    let bytes = 0;
    for (const def of this.families) {
      const piece = target.get(def.name);
      if (!piece || piece.plain.length === 0) continue;
      const header = this.headerOf(def).plain;
      parts.push(header, piece.plain);
      bytes += header.byteLength + piece.plain.byteLength;
    }
    return { parts, bytes };
  }

  /** The exposition now: text and a complete gzip of it (tests). */
  get current(): { readonly text: string; readonly gzip: Buffer; readonly version: number } {
    const snap = this.snapshot();
    return { text: snap.text, gzip: Buffer.concat(snap.gzip(finalPiece(new Uint8Array(0)))), version: snap.version };
  }

  /** The exposition now, for a scrape: its text parts, and its gzip stream with a tail appended. */
  snapshot(): ExpositionSnapshot {
    const built = this.build();
    return {
      get parts() {
        return (built.batched ??= coalesce(built.parts));
      },
      bytes: built.summary.bytes,
      version: built.version,
      get text() {
        return Buffer.concat(built.parts).toString('utf8');
      },
      gzip: (tail) => gzipMember(built.deflated, built.summary, tail),
    };
  }

  private build(): BuiltExposition {
    if (this.built?.version === this.version) return this.built;
    const pieces: DeflatedPiece[] = [];
    for (const def of this.families) {
      let header = false;
      for (const target of this.targets.values()) {
        const piece = target.get(def.name);
        if (!piece || piece.plain.length === 0) continue;
        if (!header) {
          pieces.push(this.headerOf(def));
          header = true;
        }
        pieces.push(piece);
      }
    }
    this.built = {
      version: this.version,
      parts: pieces.map((p) => p.plain),
      batched: undefined,
      deflated: coalesce(pieces.map((p) => p.deflated)),
      summary: summarise(pieces),
    };
    return this.built;
  }

  private headerOf(def: FamilyDef): DeflatedPiece {
    let header = this.headers.get(def.name);
    if (!header) {
      header = deflatePiece(Buffer.from(familyHeader(def), 'utf8'));
      this.headers.set(def.name, header);
    }
    return header;
  }
}

interface BuiltExposition {
  readonly version: number;
  readonly parts: readonly Uint8Array[];
  /** `parts` coalesced for sending, made when a plain-text scrape first asks. */
  batched: readonly Uint8Array[] | undefined;
  /** The deflated pieces, coalesced for sending. */
  readonly deflated: readonly Uint8Array[];
  readonly summary: PiecesSummary;
}

export interface ExpositionSnapshot {
  /** The upstream text, decoded on demand (tests). */
  readonly text: string;
  /** The exposition as UTF-8, to be sent part after part; `bytes` long in all. */
  readonly parts: readonly Uint8Array[];
  readonly bytes: number;
  readonly version: number;
  /** The parts of one gzip member holding the exposition followed by `tail` (finalPiece()). */
  gzip(tail: FinalPiece): Uint8Array[];
}

/**
 * Runs of small parts joined into buffers of at least BATCH_BYTES (large parts kept as they are).
 * A response is written part by part, and each write costs: 15,000 parts (250 targets x 60
 * families) took ~200 ms to send against ~20 ms for the same bytes in one buffer.
 */
function coalesce(parts: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let group: Uint8Array[] = [];
  let bytes = 0;
  const flush = () => {
    if (group.length === 1) out.push(group[0]!);
    else if (group.length > 1) out.push(Buffer.concat(group, bytes));
    group = [];
    bytes = 0;
  };
  for (const part of parts) {
    if (part.byteLength >= BATCH_BYTES) {
      flush();
      out.push(part);
      continue;
    }
    group.push(part);
    bytes += part.byteLength;
    if (bytes >= BATCH_BYTES) flush();
  }
  flush();
  return out;
}

const BATCH_BYTES = 64 * 1024;

export function familyHeader(def: FamilyDef): string {
  return `# HELP ${def.name} ${escapeHelp(def.help)}\n# TYPE ${def.name} ${def.type}\n`;
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
