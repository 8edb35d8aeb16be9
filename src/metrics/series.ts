import type { FamilyDef } from './catalogue.js';
import { ValueChecks } from './ranges.js';

/** A value as it arrives from an upstream field: absent and null produce no sample. */
export type RawValue = number | boolean | null | undefined;

/** A field whose value had a type the mapping did not expect: reported, never silently lost. */
export interface ShapeProblem {
  readonly family: string;
  readonly labels: readonly string[];
  readonly got: string;
}

const MAX_PROBLEMS_KEPT = 20;

/**
 * Lines of a family are joined and encoded to UTF-8 every this many lines. A line built by string
 * concatenation is a tree of small string pieces; kept until render() all those pieces survive
 * several young-generation collections and get copied each time, which on 300,000 series cost
 * more CPU than building the lines. Encoded early, the strings die young and only the blocks'
 * bytes survive, outside the V8 heap: a poll of 10,000 streams (35 MB of text) no longer fills
 * the old generation, whose collection stalled the event loop that serves scrapes.
 */
const LINES_PER_BLOCK = 256;

/** The sample lines of one family: encoded blocks of joined lines, then the lines not joined yet. */
interface FamilyLines {
  readonly blocks: Buffer[];
  readonly pending: string[];
}

/** Escapes a label value for the Prometheus text format 0.0.4. */
export function escapeLabelValue(value: string): string {
  if (!/[\\"\n]/.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

export interface HistogramValue {
  /** Upper bounds, ascending, without +Inf. */
  readonly buckets: readonly number[];
  /** Cumulative counts, one per bucket (the +Inf bucket is `count`). */
  readonly cumulativeCounts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/**
 * Collects the samples of one collector run for one target, rendered straight to text lines per
 * family. The target's constant labels (`server="edge-1"`) come first on every series. After
 * `maxSeries` series the rest are dropped in arrival order (collectors emit in the upstream's
 * stable sort order, so the same series are dropped each poll) and counted in `dropped`.
 */
export class SeriesWriter {
  private readonly lines = new Map<string, FamilyLines>();
  private readonly constPrefix: string;
  private readonly constLabelNames: readonly string[];
  private seriesCount = 0;
  dropped = 0;
  readonly problems: ShapeProblem[] = [];
  problemCount = 0;
  /** Values outside their family's range: refused at the entry points below (src/metrics/ranges.ts). */
  readonly checks = new ValueChecks();

  constructor(
    constLabels: readonly (readonly [string, string])[],
    private readonly maxSeries: number = Number.POSITIVE_INFINITY,
  ) {
    this.constLabelNames = constLabels.map(([name]) => name);
    this.constPrefix = constLabels.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',');
  }

  get series(): number {
    return this.seriesCount;
  }

  /**
   * Adds one gauge or counter sample. `labelValues` are the family's labels after the constant
   * ones, in order (or `labelNames` when given, for families with configured labels).
   * Booleans become 1/0; null and undefined add nothing; any other type is a shape problem.
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
    if (!this.admit()) return;
    this.push(def, `${def.name}${this.labelBlock(def, labelValues, labelNames)} ${formatValue(v)}`);
  }

  /**
   * The constant label pairs of this writer (`server="edge-1"`): the key under which a collector
   * may keep label blocks from labelBlockOf() across polls.
   */
  get constLabels(): string {
    return this.constPrefix;
  }

  /**
   * The label block (`{server="edge-1",stream="a"}`) of a series, escaped, for a collector that
   * writes the same label sets every poll (sessions groups) and keeps the block instead of
   * rebuilding it per sample: see addSample().
   */
  labelBlockOf(def: FamilyDef, labelValues: readonly string[], labelNames?: readonly string[]): string {
    return this.labelBlock(def, labelValues, labelNames);
  }

  /**
   * Adds one gauge or counter sample whose label block came from labelBlockOf() of a writer with
   * the same constLabels. A number only: the caller has done the checks add() does.
   */
  addSample(def: FamilyDef, labelBlock: string, value: number): void {
    if (!this.checks.accept(def, value, [labelBlock])) return;
    if (!this.admit()) return;
    this.push(def, `${def.name}${labelBlock} ${formatValue(value)}`);
  }

  /** Adds one histogram series (its buckets, sum and count). Counts as one series. */
  addHistogram(def: FamilyDef, labelValues: readonly string[], h: HistogramValue): void {
    if (!this.checks.accept(def, h.sum, labelValues) || !this.checks.accept(def, h.count, labelValues)) return;
    if (!this.admit()) return;
    const base = this.labelPairs(def, labelValues);
    const withLe = (le: string) => `{${base ? `${base},` : ''}le="${le}"}`;
    for (let i = 0; i < h.buckets.length; i++) {
      this.push(def, `${def.name}_bucket${withLe(formatValue(h.buckets[i]!))} ${formatValue(h.cumulativeCounts[i]!)}`);
    }
    this.push(def, `${def.name}_bucket${withLe('+Inf')} ${formatValue(h.count)}`);
    const block = base ? `{${base}}` : '';
    this.push(def, `${def.name}_sum${block} ${formatValue(h.sum)}`);
    this.push(def, `${def.name}_count${block} ${formatValue(h.count)}`);
  }

  /** Records a value of an unexpected type for a family, to be reported by whoever runs the collector. */
  recordProblem(def: FamilyDef, labelValues: readonly string[], got: unknown): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS_KEPT) {
      this.problems.push({ family: def.name, labels: [...labelValues], got: describeType(got) });
    }
  }

  /**
   * The rendered sample lines per family name, without HELP/TYPE: blocks of UTF-8, each line ending
   * in a newline. Handed over as they are (the writer is done once rendered); the exposition cache
   * copies them once, into its body.
   */
  render(): Map<string, readonly Buffer[]> {
    const out = new Map<string, readonly Buffer[]>();
    for (const [name, lines] of this.lines) {
      flush(lines);
      out.set(name, lines.blocks);
    }
    return out;
  }

  private admit(): boolean {
    if (this.seriesCount >= this.maxSeries) {
      this.dropped++;
      return false;
    }
    this.seriesCount++;
    return true;
  }

  private push(def: FamilyDef, line: string): void {
    let lines = this.lines.get(def.name);
    if (!lines) {
      lines = { blocks: [], pending: [] };
      this.lines.set(def.name, lines);
    }
    lines.pending.push(line);
    if (lines.pending.length >= LINES_PER_BLOCK) flush(lines);
  }

  private labelPairs(def: FamilyDef, labelValues: readonly string[], labelNames?: readonly string[]): string {
    // The names are labelNames, else the family's labels after the constant ones (no slice per sample).
    const offset = this.constLabelNames.length;
    const count = labelNames ? labelNames.length : def.labels.length - offset;
    let s = this.constPrefix;
    for (let i = 0; i < count; i++) {
      const name = labelNames ? labelNames[i] : def.labels[i + offset];
      const value = escapeLabelValue(labelValues[i] ?? '');
      s = s ? `${s},${name}="${value}"` : `${name}="${value}"`;
    }
    return s;
  }

  private labelBlock(def: FamilyDef, labelValues: readonly string[], labelNames?: readonly string[]): string {
    const pairs = this.labelPairs(def, labelValues, labelNames);
    return pairs ? `{${pairs}}` : '';
  }
}

/** Encodes the lines not joined yet into one more block. */
function flush(lines: FamilyLines): void {
  if (lines.pending.length === 0) return;
  lines.pending.push('');
  lines.blocks.push(Buffer.from(lines.pending.join('\n'), 'utf8'));
  lines.pending.length = 0;
}

function describeType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v;
}
