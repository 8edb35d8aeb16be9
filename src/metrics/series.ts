import type { FamilyDef } from './catalogue.js';

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
  private readonly lines = new Map<string, string[]>();
  private readonly constPrefix: string;
  private readonly constLabelNames: readonly string[];
  private seriesCount = 0;
  dropped = 0;
  readonly problems: ShapeProblem[] = [];
  problemCount = 0;

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
    if (!this.admit()) return;
    this.familyLines(def).push(`${def.name}${this.labelBlock(def, labelValues, labelNames)} ${formatValue(v)}`);
  }

  /** Adds one histogram series (its buckets, sum and count). Counts as one series. */
  addHistogram(def: FamilyDef, labelValues: readonly string[], h: HistogramValue): void {
    if (!this.admit()) return;
    const out = this.familyLines(def);
    const base = this.labelPairs(def, labelValues);
    const withLe = (le: string) => `{${base ? `${base},` : ''}le="${le}"}`;
    for (let i = 0; i < h.buckets.length; i++) {
      out.push(`${def.name}_bucket${withLe(formatValue(h.buckets[i]!))} ${formatValue(h.cumulativeCounts[i]!)}`);
    }
    out.push(`${def.name}_bucket${withLe('+Inf')} ${formatValue(h.count)}`);
    const block = base ? `{${base}}` : '';
    out.push(`${def.name}_sum${block} ${formatValue(h.sum)}`);
    out.push(`${def.name}_count${block} ${formatValue(h.count)}`);
  }

  /** Records a value of an unexpected type for a family, to be reported by whoever runs the collector. */
  recordProblem(def: FamilyDef, labelValues: readonly string[], got: unknown): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS_KEPT) {
      this.problems.push({ family: def.name, labels: [...labelValues], got: describeType(got) });
    }
  }

  /** The rendered sample lines per family name, without HELP/TYPE. */
  render(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [name, lines] of this.lines) out.set(name, lines.join('\n') + '\n');
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

  private familyLines(def: FamilyDef): string[] {
    let lines = this.lines.get(def.name);
    if (!lines) {
      lines = [];
      this.lines.set(def.name, lines);
    }
    return lines;
  }

  private labelPairs(def: FamilyDef, labelValues: readonly string[], labelNames?: readonly string[]): string {
    const names = labelNames ?? def.labels.slice(this.constLabelNames.length);
    let s = this.constPrefix;
    for (let i = 0; i < names.length; i++) {
      const pair = `${names[i]}="${escapeLabelValue(labelValues[i] ?? '')}"`;
      s = s ? `${s},${pair}` : pair;
    }
    return s;
  }

  private labelBlock(def: FamilyDef, labelValues: readonly string[], labelNames?: readonly string[]): string {
    const pairs = this.labelPairs(def, labelValues, labelNames);
    return pairs ? `{${pairs}}` : '';
  }
}

function describeType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v;
}
