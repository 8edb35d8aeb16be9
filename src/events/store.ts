/**
 * The event families' series (src/events/families.ts), kept on the serving thread and written
 * and deflated by the renderer the polled families go through (src/render/prepare.ts) when a
 * scrape asks and something changed. One ServerEvents per known server name; a stream's series live in one
 * StreamEvents, so they are withdrawn together with the stream (when the poll stops exporting
 * it, or the server leaves the config).
 */
import type { FamilyBytes } from '../render/family-bytes.js';
import { familyHeader } from '../render/family-state.js';
import type { SampleSource } from '../render/prepare.js';
import { escapeLabelValue } from '../render/series.js';
import { EVENT_FAMILIES, SESSION_BUCKETS } from './families.js';
import { EVENT_KINDS, OTHER_KIND } from './kinds.js';
import type { EventSwitch } from '../config/events-schema.js';
import type { FamilyDef } from '../families/define.js';

const F = EVENT_FAMILIES;
const KIND_LABELS = [...EVENT_KINDS, OTHER_KIND];
export const KIND_INDEX: ReadonlyMap<string, number> = new Map(EVENT_KINDS.map((k, i) => [k, i]));
export const OTHER_INDEX = EVENT_KINDS.length;

export const BATCH_CODES = ['200', '400', '401', '404', '413'] as const;
export const REJECT_REASONS = ['not_object', 'no_kind', 'shape'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export class Histogram {
  readonly counts = new Float64Array(SESSION_BUCKETS.length);
  count = 0;
  sum = 0;

  observe(v: number): void {
    for (let i = 0; i < SESSION_BUCKETS.length; i++) if (v <= SESSION_BUCKETS[i]!) this.counts[i]!++;
    this.count++;
    this.sum += v;
  }
}

export class StreamEvents {
  /** The stream's name as a label value, escaped once (every render writes it). */
  readonly label: string;
  sourceLost = 0;
  pushBlocked: number | undefined;
  closed: number | undefined;
  /** By protocol: sessions closed and their lengths (events.families.play_per_stream). */
  play: Map<string, Histogram> | undefined;
  /** Date.now() of the last event (streams of servers this replica does not poll age out). */
  lastEventAt = 0;

  constructor(name: string) {
    this.label = escapeLabelValue(name);
  }
}

export class ServerEvents {
  readonly kinds = new Float64Array(KIND_LABELS.length);
  readonly streams = new Map<string, StreamEvents>();
  readonly play = new Map<string, Histogram>();
  readonly batches = new Map<string, number>(BATCH_CODES.map((c) => [c, 0]));
  readonly rejected = new Map<RejectReason, number>(REJECT_REASONS.map((r) => [r, 0]));
  deviceShortages = 0;
  duplicates = 0;
  withoutId = 0;
  /** The streams the last poll of this server exported (capped names); undefined: not polled here. */
  exported: ReadonlySet<string> | undefined;
  /** Date.now() of the last sweep of idle streams (servers not polled here). */
  lastSweep = 0;
}

const encoded = new Map<string, Uint8Array>();
/** UTF-8 of a fixed string (family names and suffixes, their headers), encoded once. */
function bytesOf(text: string): Uint8Array {
  let b = encoded.get(text);
  if (b === undefined) encoded.set(text, (b = Buffer.from(text, 'utf8')));
  return b;
}

/**
 * The event series as a source of the renderer the polled families go through
 * (src/render/prepare.ts): family by family in table order, each with its HELP and TYPE in front
 * of its first line (a family without lines writes nothing, and is left out).
 */
export function eventsSource(servers: ReadonlyMap<string, ServerEvents>, unknownBatches: number, switches: Readonly<Record<EventSwitch, boolean>>): SampleSource {
  const each = (fn: (s: ServerEvents, q: string) => void) => {
    for (const [server, s] of servers) fn(s, escapeLabelValue(server));
  };
  // The per-stream families have a line per exported stream: the hot loop, with no string made per line.
  const perStream = (get: (st: StreamEvents) => number | undefined) => (out: Lines) =>
    each((s, q) => {
      const open = Buffer.from(`{server="${q}",stream="`, 'utf8');
      for (const st of s.streams.values()) {
        const v = get(st);
        if (v !== undefined) out.streamLine(open, st.label, v);
      }
    });
  const writers: [FamilyDef, (out: Lines) => void][] = [
    [F.eventsTotal, (out) => each((s, q) => s.kinds.forEach((v, i) => out.line(F.eventsTotal.name, `server="${q}",event="${KIND_LABELS[i]}"`, v)))],
    [F.sourceLost, perStream((st) => st.sourceLost)],
  ];
  if (switches.push_blocked) writers.push([F.pushBlocked, perStream((st) => st.pushBlocked)]);
  if (switches.stream_closed) writers.push([F.streamClosed, perStream((st) => st.closed)]);
  if (switches.play_per_stream) {
    writers.push(
      [F.playClosed, (out) => each((s, q) => {
        for (const st of s.streams.values()) for (const [proto, h] of st.play ?? []) out.line(F.playClosed.name, `server="${q}",stream="${st.label}",proto="${proto}"`, h.count);
      })],
      [F.streamPlayDuration, (out) => each((s, q) => {
        for (const st of s.streams.values()) for (const [proto, h] of st.play ?? []) out.histogram(F.streamPlayDuration.name, `server="${q}",stream="${st.label}",proto="${proto}"`, h);
      })],
    );
  }
  writers.push(
    [F.playDuration, (out) => each((s, q) => {
      for (const [proto, h] of s.play) out.histogram(F.playDuration.name, `server="${q}",proto="${proto}"`, h);
    })],
    [F.deviceShortage, (out) => each((s, q) => out.line(F.deviceShortage.name, `server="${q}"`, s.deviceShortages))],
    [F.batchesTotal, (out) => {
      each((s, q) => {
        for (const [code, n] of s.batches) out.line(F.batchesTotal.name, `server="${q}",code="${code}"`, n);
      });
      if (unknownBatches > 0 || servers.size > 0) out.line(F.batchesTotal.name, 'server="",code="404"', unknownBatches);
    }],
    [F.rejectedTotal, (out) => each((s, q) => {
      for (const [reason, n] of s.rejected) out.line(F.rejectedTotal.name, `server="${q}",reason="${reason}"`, n);
    })],
    [F.duplicateTotal, (out) => each((s, q) => out.line(F.duplicateTotal.name, `server="${q}"`, s.duplicates))],
    [F.withoutIdTotal, (out) => each((s, q) => out.line(F.withoutIdTotal.name, `server="${q}"`, s.withoutId))],
  );
  const byName = new Map(writers.map(([def, write]) => [def.name, { def, write }]));
  return {
    familyNames: () => byName.keys(),
    renderFamily: (name, into) => {
      const family = byName.get(name);
      if (family) family.write(new Lines(into, family.def));
    },
  };
}

const NEWLINE = 0x0a;
const CLOSE_STREAM = Buffer.from('"} ', 'utf8');

/** One family's lines written into a FamilyBytes, its HELP and TYPE first (only once it has a line). */
class Lines {
  private started = false;
  private readonly name: Uint8Array;

  constructor(
    private readonly into: FamilyBytes,
    private readonly def: FamilyDef,
  ) {
    this.name = bytesOf(def.name);
  }

  /** `name{labels} v` and a newline. */
  line(name: string, labels: string, v: number): void {
    const out = this.begin();
    out.bytes(bytesOf(name));
    out.byte(0x7b);
    out.utf8(labels);
    out.byte(0x7d);
    out.byte(0x20);
    out.value(v);
    out.byte(NEWLINE);
    out.endLine();
  }

  /** The family's line of one stream: `open` is `{server="...",stream="`, `label` the stream's escaped name. */
  streamLine(open: Uint8Array, label: string, v: number): void {
    const out = this.begin();
    out.bytes(this.name);
    out.bytes(open);
    out.utf8(label);
    out.bytes(CLOSE_STREAM);
    out.value(v);
    out.byte(NEWLINE);
    out.endLine();
  }

  histogram(name: string, labels: string, h: Histogram): void {
    SESSION_BUCKETS.forEach((le, i) => this.line(`${name}_bucket`, `${labels},le="${le}"`, h.counts[i]!));
    this.line(`${name}_bucket`, `${labels},le="+Inf"`, h.count);
    this.line(`${name}_sum`, labels, h.sum);
    this.line(`${name}_count`, labels, h.count);
  }

  private begin(): FamilyBytes {
    if (!this.started) {
      this.into.bytes(bytesOf(familyHeader(this.def)));
      this.started = true;
    }
    return this.into;
  }
}
