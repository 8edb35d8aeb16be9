import type { FamilyDef } from '../families/define.js';
import type { FamilyBytes } from './family-bytes.js';
import { widened } from '../lib/typed-arrays.js';

/** The HELP and TYPE lines of a family in the text format, its help escaped as the format asks. */
export function familyHeader(def: FamilyDef): string {
  return `# HELP ${def.name} ${escapeHelp(def.help)}\n# TYPE ${def.name} ${def.type}\n`;
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/**
 * Samples a family's arrays are first made for when nothing is known of its size, and the most
 * they are made for up front: beyond, they grow as they fill.
 */
const FIRST_SAMPLES = 8;
const MAX_PRESIZED_SAMPLES = 100_000;

/**
 * One family's samples and its place in the budget. A sample is kept as its label block, an
 * optional tail of further label pairs, and its value: a few pointers and a number instead of a
 * line of text, until the family is rendered at the end of the poll (SeriesWriter.renderFamily(),
 * src/render/series.ts).
 *
 * The arrays are made for the samples the family had in the target's last run (`expected`), so
 * a poll fills them once instead of growing them by copies: a poll of 10,000 streams made about
 * 21 MB of such garbage growing its arrays, against 5 MB of arrays it ends with.
 */
/** Each family's name as bytes, encoded once for the life of the process (a run makes a FamilyState per family). */
const NAMES = new WeakMap<FamilyDef, Buffer>();
function nameBytes(def: FamilyDef): Buffer {
  let name = NAMES.get(def);
  if (name === undefined) NAMES.set(def, (name = Buffer.from(def.name, 'latin1')));
  return name;
}

export class FamilyState {
  readonly name: Buffer;
  blocks: Uint8Array[];
  /** Whether `blocks` is another family's array (shareBlocks()): copied before it is written. */
  private borrowed = false;
  /** Per sample: pairs after the cached block's first label (`,status="running"}`), when any. */
  suffixes: (Uint8Array | undefined)[] | undefined;
  values: Float64Array;
  /** Samples in blocks/values. */
  count = 0;
  /** Histogram lines, written as text when they come (a few per run). */
  text: FamilyBytes | undefined;
  /** Encoded tails by their label values, for this run. */
  suffixCache: Map<string, Uint8Array> | undefined;
  /** Series written (or, once shed, that would have been written) in this poll. */
  series = 0;
  shed = false;
  constructor(
    readonly def: FamilyDef,
    /** Position in the shedding order of its collector (FamilyDef.shedRank); -1 for core families. */
    readonly shedRank: number,
    expected: number,
  ) {
    this.name = nameBytes(def);
    const size = Math.min(expected, MAX_PRESIZED_SAMPLES);
    // A holey array of that length stays in fast elements (not a dictionary) in V8.
    this.blocks = size > 0 ? new Array<Uint8Array>(size) : [];
    this.values = new Float64Array(Math.max(size, FIRST_SAMPLES));
  }

  push(block: Uint8Array, value: number, suffix?: Uint8Array): void {
    const i = this.count;
    if (this.borrowed) this.ownBlocks();
    if (i === this.values.length) this.values = widened(this.values, Math.max(i * 2, FIRST_SAMPLES));
    if (suffix !== undefined) (this.suffixes ??= new Array<Uint8Array | undefined>(this.blocks.length))[i] = suffix;
    this.blocks[i] = block;
    this.values[i] = value;
    this.count = i + 1;
  }

  /**
   * Takes `other`'s array of blocks when its first `count` are this family's, block for block: the
   * families of a collector that writes one sample per stream (or per group) in the same order then
   * keep one array of blocks between the end of the run and its rendering, not one each.
   * Returns whether it did.
   */
  shareBlocks(other: FamilyState): boolean {
    const n = this.count;
    if (other.count !== n || other.blocks === this.blocks) return false;
    const mine = this.blocks;
    const theirs = other.blocks;
    for (let i = 0; i < n; i++) if (mine[i] !== theirs[i]) return false;
    this.blocks = theirs;
    this.borrowed = true;
    return true;
  }

  /**
   * Gives back the room the arrays have past their samples, where it is more than an eighth: a
   * family that outgrew the size it was made for doubled its arrays, and the run's samples are kept
   * until the next poll replaces them (sessions groups come and go, so the four families of the
   * groups often outgrew theirs by a few and kept room for twice their samples).
   */
  trim(): void {
    const n = this.count;
    if (this.values.length - n <= (n >>> 3) + FIRST_SAMPLES) return;
    this.values = this.values.slice(0, Math.max(n, FIRST_SAMPLES));
    if (!this.borrowed && this.blocks.length > n) this.blocks.length = n;
    if (this.suffixes !== undefined && this.suffixes.length > n) this.suffixes.length = n;
  }

  /** Makes `blocks` this family's own again (a sample after shareBlocks()). */
  private ownBlocks(): void {
    this.blocks = this.blocks.slice(0, this.count);
    this.borrowed = false;
  }

  get empty(): boolean {
    return this.count === 0 && (this.text === undefined || this.text.length === 0);
  }

  clear(): void {
    this.blocks = [];
    this.borrowed = false;
    this.suffixes = undefined;
    this.values = new Float64Array(0);
    this.count = 0;
    this.text = undefined;
    this.suffixCache = undefined;
  }
}

/**
 * A family's samples as its run ended, as rendering reads them: two runs whose samples are the
 * same (sameSamples()) write the same text. Read only: the arrays are the run's own and are not
 * written once the run has ended (a later run makes new ones).
 */
export interface FamilySamples {
  readonly count: number;
  /** Label blocks, compared by identity: a collector's block cache hands out the same block for the same labels. */
  readonly blocks: readonly Uint8Array[];
  readonly suffixes: readonly (Uint8Array | undefined)[] | undefined;
  readonly values: Float64Array;
}

/**
 * Whether two runs' samples write the same lines: the same blocks in the same order, tails of the
 * same bytes, and values of the same bits (0 and -0 differ, every NaN is the same NaN).
 */
export function sameSamples(a: FamilySamples, b: FamilySamples): boolean {
  const n = a.count;
  if (b.count !== n) return false;
  const av = a.values;
  const bv = b.values;
  for (let i = 0; i < n; i++) if (!Object.is(av[i], bv[i])) return false;
  if (a.blocks !== b.blocks) for (let i = 0; i < n; i++) if (a.blocks[i] !== b.blocks[i]) return false;
  const as = a.suffixes;
  const bs = b.suffixes;
  if (as === bs) return true;
  if (as === undefined || bs === undefined) return false;
  for (let i = 0; i < n; i++) {
    const x = as[i];
    const y = bs[i];
    if (x !== y && (x === undefined || y === undefined || Buffer.compare(x, y) !== 0)) return false;
  }
  return true;
}

/**
 * The families whose label blocks are the same, in the same order (a collector's per-stream
 * families, the four of each sessions group), keep one array of them (FamilyState.shareBlocks()).
 * A sample written afterwards still goes to its family alone.
 */
export function shareBlockArrays(families: Iterable<FamilyState>): void {
  const kept = new Map<number, FamilyState[]>();
  for (const f of families) {
    if (f.count === 0) continue;
    const same = kept.get(f.count);
    if (same === undefined) kept.set(f.count, [f]);
    else if (!same.some((other) => f.shareBlocks(other))) same.push(f);
  }
}
