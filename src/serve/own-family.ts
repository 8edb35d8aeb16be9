/**
 * One family of the exporter's own metrics (self.ts): its series and its text, rendered again
 * only after one of its series changed.
 *
 * prom-client formats every series on every scrape: with 250 targets (15,500 self series, most
 * of them `api_errors_total` from 0) that is 23-40 ms of the serving thread per scrape, and with
 * a poll result arriving every 60 ms no rendering could be reused. Here a series keeps its
 * `name{labels} ` prefix, made once, and a family whose series did not change since the last
 * scrape costs nothing.
 */
import { familyHeader } from '../render/family-state.js';
import type { FamilyDef } from '../families/define.js';
import { escapeLabelValue } from '../render/series.js';

export type Labels = Readonly<Record<string, string>>;

interface OwnSeries {
  readonly labels: Labels;
  /** `name{a="x",b="y"} `. */
  readonly prefix: string;
  value: number;
}

export class OwnFamily {
  private readonly series = new Map<string, OwnSeries>();
  private readonly header: string;
  private text: string | undefined;

  constructor(readonly def: FamilyDef) {
    if (def.type !== 'gauge' && def.type !== 'counter') throw new Error(`self-metric ${def.name}: type ${def.type} is not supported here`);
    this.header = familyHeader(def);
    // A family without labels has its one series from the start, at 0 (as prom-client had it).
    if (def.labels.length === 0) this.entry({}).value = 0;
  }

  set(labels: Labels, value: number): void {
    if (this.def.type !== 'gauge') throw new Error(`self-metric ${this.def.name} is a ${this.def.type}: it cannot be set`);
    const s = this.entry(labels);
    if (Object.is(s.value, value)) return;
    s.value = value;
    this.text = undefined;
  }

  /** Adds to a series (created at 0); `by` 0 exports a counter from 0. */
  inc(labels: Labels, by: number): void {
    if (!(by >= 0)) throw new Error(`self-metric ${this.def.name}: cannot add ${by}`);
    const s = this.entry(labels);
    if (by === 0) return;
    s.value += by;
    this.text = undefined;
  }

  remove(labels: Labels): void {
    if (this.series.delete(this.keyOf(labels))) this.text = undefined;
  }

  /** Removes every series whose labels `drop` says. */
  removeWhere(drop: (labels: Labels) => boolean): void {
    for (const [key, s] of this.series) {
      if (!drop(s.labels)) continue;
      this.series.delete(key);
      this.text = undefined;
    }
  }

  /** The family's HELP, TYPE and samples, in the order the series were made. */
  render(): string {
    if (this.text !== undefined) return this.text;
    let text = this.header;
    for (const s of this.series.values()) text += `${s.prefix}${valueText(s.value)}\n`;
    this.text = text;
    return text;
  }

  private entry(labels: Labels): OwnSeries {
    const key = this.keyOf(labels);
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels: { ...labels }, prefix: this.prefixOf(labels), value: 0 };
      this.series.set(key, s);
      this.text = undefined;
    }
    return s;
  }

  /** The label values in the catalogue's order; a label the catalogue does not name is a programming error. */
  private keyOf(labels: Labels): string {
    for (const name in labels) {
      if (!this.def.labels.includes(name)) throw new Error(`self-metric ${this.def.name} has no label ${name}`);
    }
    return JSON.stringify(this.def.labels.map((name) => labels[name] ?? null));
  }

  private prefixOf(labels: Labels): string {
    const parts: string[] = [];
    for (const name of this.def.labels) {
      const value = labels[name];
      if (value !== undefined) parts.push(`${name}="${escapeLabelValue(value)}"`);
    }
    return parts.length === 0 ? `${this.def.name} ` : `${this.def.name}{${parts.join(',')}} `;
  }
}

function valueText(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}
