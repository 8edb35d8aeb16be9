import type { FamilyDef } from '../families/define.js';
import { ValueChecks } from '../families/ranges.js';
import { FamilyBytes } from './family-bytes.js';
import { FamilyState, shareBlockArrays, type FamilySamples } from './family-state.js';
import type { LabelBlockCache } from './label-blocks.js';
import { mayExceed, truncateLabelValue } from './label-cap.js';
import { DEFAULT_MAX_LABEL_VALUE_BYTES } from '../config/bounds.js';

export { formatValue } from './family-bytes.js';

/** A value as it arrives from an upstream field: absent and null produce no sample. */
export type RawValue = number | boolean | null | undefined;

/** A field whose value had a type the mapping did not expect: reported, never silently lost. */
export interface ShapeProblem {
  readonly family: string;
  readonly labels: readonly string[];
  readonly got: string;
}

const MAX_PROBLEMS_KEPT = 20;

/** Escapes a label value for the Prometheus text format 0.0.4. */
export function escapeLabelValue(value: string): string {
  if (!/[\\"\n]/.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export interface HistogramValue {
  /** Upper bounds, ascending, without +Inf. */
  readonly buckets: readonly number[];
  /** Cumulative counts, one per bucket (the +Inf bucket is `count`). */
  readonly cumulativeCounts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/** Samples per family name of one collector run (SeriesWriter.sampleSizes()). */
export type SampleSizes = ReadonlyMap<string, number>;

/** A label block made by labelBlockOf(): the encoded `{...}` of one label set. */
export type LabelBlock = Uint8Array;

const SPACE = 0x20;
const NEWLINE = 0x0a;
const EMPTY_BLOCK: LabelBlock = new Uint8Array(0);

/** Distinct label-pair tails kept per family and run (states, input indexes); more are encoded per sample. */
const MAX_SUFFIXES = 4096;

/** Where render() writes a family before copying it out (synchronous, so one per thread serves all writers). */
const shared = new FamilyBytes();

/**
 * Collects the samples of one collector run for one target, per family as encoded label blocks
 * and values, written out as UTF-8 lines only when the poll is done (renderFamily(), one family at
 * a time into a reused buffer). The target's constant labels (`server="edge-1"`) come first on
 * every series.
 *
 * The budget (`maxSeries`, the tiers of src/families/define.ts): when the series of this run exceed it, whole
 * non-core families are shed in the table's order (optional ones, then default ones) and counted
 * per family in `shed`; core series are admitted in arrival order up to the cap and the rest
 * counted in `dropped` (collectors emit in the upstream's stable sort order, so the same series
 * survive each poll). Shedding happens as soon as the total passes the cap, so a run never holds
 * much more than the cap; the families shed are the same as if all were counted first.
 *
 * Every value goes through add(), addSample() or addHistogram(): the one place to check a value
 * before it becomes a sample (each calls admit() once the value is a number).
 */
export class SeriesWriter {
  private readonly families = new Map<string, FamilyState>();
  private readonly constPrefix: string;
  private readonly constLabelNames: readonly string[];
  private coreSeries = 0;
  /** Series of non-core families not shed. */
  private otherSeries = 0;
  /** Non-core families in shedding order as they appear; the next to shed is the lowest rank. */
  private readonly sheddable: FamilyState[] = [];
  private shedThrough = -1;
  private blockCache: LabelBlockCache | undefined;
  dropped = 0;
  readonly problems: ShapeProblem[] = [];
  problemCount = 0;
  /** Values outside their family's range: refused at the entry points below (src/families/ranges.ts). */
  readonly checks = new ValueChecks();
  /** Label values written cut to max_label_value_bytes in this run, by family (src/render/label-cap.ts). */
  readonly truncated = new Map<string, number>();
  /** Values of up to this many UTF-16 units are never over the cap: the common path checks only this. */
  private readonly safeLength: number;
  private lastLong: string | undefined;
  private lastCapped = '';

  /**
   * `sizes`: the samples per family of the same collector's last run on this target
   * (sampleSizes()), which the family arrays are made for; a guess, they grow past it.
   */
  constructor(
    constLabels: readonly (readonly [string, string])[],
    private readonly maxSeries: number = Number.POSITIVE_INFINITY,
    private readonly sizes?: SampleSizes,
    private readonly maxLabelValueBytes: number = DEFAULT_MAX_LABEL_VALUE_BYTES,
  ) {
    this.safeLength = Math.floor(maxLabelValueBytes / 3);
    this.constLabelNames = constLabels.map(([name]) => name);
    this.constPrefix = constLabels.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',');
  }

  /** Series exported by this run (histograms count as one). */
  get series(): number {
    return this.coreSeries + this.otherSeries;
  }

  /** Samples per family in this run, for the next run's writer (see the constructor). */
  sampleSizes(): SampleSizes {
    const out = new Map<string, number>();
    for (const [name, f] of this.families) if (f.count > 0) out.set(name, f.count);
    return out;
  }

  /** Series of each shed family in this run (nothing when nothing was shed). */
  get shed(): ReadonlyMap<string, number> {
    const out = new Map<string, number>();
    for (const f of this.sheddable) if (f.shed && f.series > 0) out.set(f.def.name, f.series);
    return out;
  }

  /**
   * The constant label pairs of this writer (`server="edge-1"`): the key under which a collector
   * may keep label blocks from labelBlockOf() across polls.
   */
  get constLabels(): string {
    return this.constPrefix;
  }

  /**
   * Label blocks of families with one label after the constant ones (`stream`) come from this
   * cache, which the collector keeps across polls (and sweeps).
   */
  useBlockCache(cache: LabelBlockCache): void {
    this.blockCache = cache;
  }

  /**
   * Adds one gauge or counter sample. `labelValues` are the family's labels after the constant
   * ones, in order (or `labelNames` when given, for families with configured labels).
   * Booleans become 1/0; null and undefined add nothing; any other type is a shape problem.
   * No reference to `labelValues` is kept (what is kept is copied), so a caller may reuse the array.
   */
  add(def: FamilyDef, labelValues: readonly string[], value: RawValue | unknown, labelNames?: readonly string[]): void {
    let v: number;
    if (value === null || value === undefined) return;
    if (typeof value === 'number') v = value;
    else if (typeof value === 'boolean') v = value ? 1 : 0;
    else {
      this.recordProblem(def, labelValues, value);
      return;
    }
    if (!this.checks.accept(def, v, labelValues)) return;
    const f = this.admit(def);
    if (f === undefined) return;
    const offset = this.constLabelNames.length;
    const cache = this.blockCache;
    const n = labelValues.length;
    if (cache !== undefined && labelNames === undefined && n >= 1 && def.labels.length === offset + n) {
      const label = def.labels[offset]!;
      // Capped before the lookup: the cache is keyed by the value as written, never by a huge one.
      const first = this.capped(def, labelValues[0]!);
      const block = cache.get(label, first) ?? cache.set(label, first, this.encodedBlock(def, [first], [label]));
      // Further pairs (a state, an input index) follow the cached block of the first label.
      f.push(block, v, n === 1 ? undefined : this.suffixOf(f, labelValues));
    } else {
      f.push(this.encodedBlock(def, labelValues, labelNames), v);
    }
  }

  /** `,status="running"}`: the pairs after the first label, closing the block. */
  private suffixOf(f: FamilyState, labelValues: readonly string[]): Uint8Array {
    const key = labelValues.length === 2 ? labelValues[1]! : labelValues.slice(1).join('\u0000');
    const cache = (f.suffixCache ??= new Map());
    let suffix = cache.get(key);
    if (suffix === undefined) {
      const offset = this.constLabelNames.length;
      let text = '';
      for (let i = 1; i < labelValues.length; i++) text += `,${f.def.labels[offset + i]}="${escapeLabelValue(this.capped(f.def, labelValues[i]!))}"`;
      suffix = Buffer.from(`${text}}`, 'utf8');
      if (cache.size < MAX_SUFFIXES) cache.set(key, suffix);
    }
    return suffix;
  }

  /**
   * The label block (`{server="edge-1",stream="a"}`, encoded) of a series, for a collector that
   * writes the same label sets every poll (sessions groups) and keeps the block: see addSample().
   */
  labelBlockOf(def: FamilyDef, labelValues: readonly string[], labelNames?: readonly string[]): LabelBlock {
    return this.encodedBlock(def, labelValues, labelNames);
  }

  /**
   * Adds one gauge or counter sample whose label block came from labelBlockOf() of a writer with
   * the same constLabels. A number only: the caller has done the checks add() does.
   */
  addSample(def: FamilyDef, labelBlock: LabelBlock, value: number): void {
    if (!this.checks.accept(def, value, [])) return;
    const f = this.admit(def);
    if (f === undefined) return;
    f.push(labelBlock, value);
  }

  /** Adds one histogram series (its buckets, sum and count). Counts as one series. */
  addHistogram(def: FamilyDef, labelValues: readonly string[], h: HistogramValue): void {
    if (!this.checks.accept(def, h.sum, labelValues) || !this.checks.accept(def, h.count, labelValues)) return;
    const f = this.admit(def);
    if (f === undefined) return;
    const base = this.labelPairs(def, labelValues);
    const out = (f.text ??= new FamilyBytes());
    const bucketPrefix = `${def.name}_bucket{${base ? `${base},` : ''}le="`;
    for (let i = 0; i <= h.buckets.length; i++) {
      out.utf8(bucketPrefix);
      if (i < h.buckets.length) out.value(h.buckets[i]!);
      else out.ascii('+Inf');
      out.ascii('"}');
      this.finishLine(out, i < h.buckets.length ? h.cumulativeCounts[i]! : h.count);
    }
    const block = base ? `{${base}}` : '';
    out.utf8(`${def.name}_sum${block}`);
    this.finishLine(out, h.sum);
    out.utf8(`${def.name}_count${block}`);
    this.finishLine(out, h.count);
  }

  /** Records a value of an unexpected type for a family, to be reported by whoever runs the collector. */
  recordProblem(def: FamilyDef, labelValues: readonly string[], got: unknown): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS_KEPT) {
      this.problems.push({ family: def.name, labels: [...labelValues], got: describeType(got) });
    }
  }

  /** The families with samples in this run (shed ones left out), in the order they came. */
  *familyNames(): IterableIterator<string> {
    for (const [name, f] of this.families) if (!f.shed && !f.empty) yield name;
  }

  /** Writes a family's sample lines (no HELP/TYPE), each ending in a newline, after what `into` holds. */
  renderFamily(name: string, into: FamilyBytes): void {
    const f = this.families.get(name);
    if (f === undefined || f.shed) return;
    const { blocks, suffixes, values, count } = f;
    const familyName = f.name;
    for (let i = 0; i < count; i++) {
      into.sampleLine(familyName, blocks[i]!, suffixes?.[i], values[i]!);
      into.endLine();
    }
    if (f.text !== undefined) {
      into.bytes(f.text.view());
      into.endLine();
    }
  }

  /**
   * The family's samples, to tell whether it writes what an earlier run wrote (src/render/prepare.ts):
   * undefined when this run has none of it, null when it also has lines kept as text (histograms).
   */
  samplesOf(name: string): FamilySamples | null | undefined {
    const f = this.families.get(name);
    if (f === undefined || f.shed || f.empty) return undefined;
    if (f.text !== undefined) return null;
    return { count: f.count, blocks: f.blocks, suffixes: f.suffixes, values: f.values };
  }

  /**
   * Ends the run's samples: each family's arrays are cut to its samples (FamilyState.trim()), and
   * families with the same label blocks in the same order share one array (shareBlockArrays()). A
   * poll nobody scraped is held as its writers until the next, so this is what a target keeps.
   */
  settle(): void {
    for (const f of this.families.values()) f.trim();
    shareBlockArrays(this.families.values());
  }

  /**
   * Frees the samples once they were rendered (the poller prepares a collector's exposition as soon
   * as it ends), keeping what the run counted: series, shed, dropped, checks and problems.
   * Rendering afterwards writes nothing.
   */
  releaseSamples(): void {
    for (const f of this.families.values()) f.clear();
  }

  /**
   * The rendered sample lines per family name, without HELP/TYPE: one buffer of UTF-8 per family,
   * each line ending in a newline; shed families are left out (tests; a poll deflates family by
   * family from renderFamily()).
   */
  render(): Map<string, readonly Buffer[]> {
    const out = new Map<string, readonly Buffer[]>();
    for (const name of this.familyNames()) {
      shared.reset();
      this.renderFamily(name, shared);
      out.set(name, [Buffer.from(shared.view())]);
    }
    return out;
  }

  /** The family's state if this sample is to be written; counts it as exported, shed or dropped. */
  private admit(def: FamilyDef): FamilyState | undefined {
    const f = this.familyOf(def);
    if (f.shedRank < 0) {
      if (this.coreSeries >= this.maxSeries) {
        this.dropped++;
        return undefined;
      }
      this.coreSeries++;
      this.shedWhileOver();
      return f;
    }
    f.series++;
    if (f.shed) return undefined;
    this.otherSeries++;
    this.shedWhileOver();
    return f.shed ? undefined : f;
  }

  /** Sheds whole non-core families, next in order first, while the series exceed the cap. */
  private shedWhileOver(): void {
    while (this.coreSeries + this.otherSeries > this.maxSeries && this.otherSeries > 0) {
      this.shedThrough++;
      for (const f of this.sheddable) {
        if (f.shedRank !== this.shedThrough || f.shed) continue;
        f.shed = true;
        this.otherSeries -= f.series;
        f.clear();
      }
    }
  }

  private familyOf(def: FamilyDef): FamilyState {
    let f = this.families.get(def.name);
    if (f === undefined) {
      const rank = def.shedRank;
      f = new FamilyState(def, rank, this.sizes?.get(def.name) ?? 0);
      // A family first seen after shedding reached its rank is shed from the start.
      if (rank >= 0) {
        f.shed = rank <= this.shedThrough;
        this.sheddable.push(f);
      }
      this.families.set(def.name, f);
    }
    return f;
  }

  private finishLine(out: FamilyBytes, value: number): void {
    out.byte(SPACE);
    out.value(value);
    out.byte(NEWLINE);
  }

  /**
   * The streams this run exported, as their `stream` label is written (cut to
   * max_label_value_bytes): what the event sink's per-stream series join (src/events).
   */
  readonly units: string[] = [];

  /** Notes a stream this run exported (only when its server's events are received: `reportStreams`). */
  noteUnit(name: string): void {
    const cut = name.length <= this.safeLength || !mayExceed(name, this.maxLabelValueBytes) ? name : name === this.lastLong ? this.lastCapped : truncateLabelValue(name, this.maxLabelValueBytes);
    this.units.push(cut);
  }

  /** The value as written: itself, or cut to max_label_value_bytes with a hash suffix (counted). */
  private capped(def: FamilyDef, value: string): string {
    if (value.length <= this.safeLength || !mayExceed(value, this.maxLabelValueBytes)) return value;
    this.countTruncated(def);
    // A stream's families write the same value one after another: it is cut (and hashed) once.
    if (value !== this.lastLong) {
      this.lastLong = value;
      this.lastCapped = truncateLabelValue(value, this.maxLabelValueBytes);
    }
    return this.lastCapped;
  }

  /** Counts one label value written cut short in `def`'s family. */
  private countTruncated(def: FamilyDef): void {
    this.truncated.set(def.name, (this.truncated.get(def.name) ?? 0) + 1);
  }

  private encodedBlock(def: FamilyDef, labelValues: readonly string[], labelNames?: readonly string[]): LabelBlock {
    const pairs = this.labelPairs(def, labelValues, labelNames);
    return pairs ? Buffer.from(`{${pairs}}`, 'utf8') : EMPTY_BLOCK;
  }

  private labelPairs(def: FamilyDef, labelValues: readonly string[], labelNames?: readonly string[]): string {
    // The names are labelNames, else the family's labels after the constant ones (no slice per sample).
    const offset = this.constLabelNames.length;
    const count = labelNames ? labelNames.length : def.labels.length - offset;
    let s = this.constPrefix;
    for (let i = 0; i < count; i++) {
      const name = labelNames ? labelNames[i] : def.labels[i + offset];
      const value = escapeLabelValue(this.capped(def, labelValues[i] ?? ''));
      s = s ? `${s},${name}="${value}"` : `${name}="${value}"`;
    }
    return s;
  }
}

function describeType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v;
}
