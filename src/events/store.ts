/**
 * The event families' series (src/events/families.ts), kept on the serving thread and written
 * as exposition text into a reused byte buffer (src/render/family-bytes.ts) when a scrape asks
 * and something changed. One ServerEvents per known server name; a stream's series live in one
 * StreamEvents, so they are withdrawn together with the stream (when the poll stops exporting
 * it, or the server leaves the config).
 */
import { FamilyBytes } from '../render/family-bytes.js';
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

/** A family's sample lines, written apart so that its HELP and TYPE go in front only when it has any. */
const lines = new FamilyBytes();
const encoded = new Map<string, Uint8Array>();
/** UTF-8 of a fixed string (family names and suffixes, their headers), encoded once. */
function bytesOf(text: string): Uint8Array {
  let b = encoded.get(text);
  if (b === undefined) encoded.set(text, (b = Buffer.from(text, 'utf8')));
  return b;
}

/** Writes every server's event series into `into`, family by family in table order. */
export function writeEvents(into: FamilyBytes, servers: ReadonlyMap<string, ServerEvents>, unknownBatches: number, switches: Readonly<Record<EventSwitch, boolean>>): void {
  const family = (def: FamilyDef, write: (out: FamilyBytes) => void) => {
    lines.reset();
    write(lines);
    if (lines.length === 0) return;
    into.bytes(bytesOf(headerOf(def)));
    into.bytes(lines.view());
  };
  const each = (fn: (s: ServerEvents, q: string) => void) => {
    for (const [server, s] of servers) fn(s, escapeLabelValue(server));
  };
  family(F.eventsTotal, (out) => each((s, q) => s.kinds.forEach((v, i) => line(out, F.eventsTotal.name, `server="${q}",event="${KIND_LABELS[i]}"`, v))));
  // The per-stream families have a line per exported stream: the hot loop, with no string made per line.
  const perStream = (def: FamilyDef, get: (st: StreamEvents) => number | undefined) =>
    family(def, (out) => {
      const name = bytesOf(def.name);
      const close = bytesOf('"} ');
      each((s, q) => {
        const open = Buffer.from(`{server="${q}",stream="`, 'utf8');
        for (const st of s.streams.values()) {
          const v = get(st);
          if (v === undefined) continue;
          out.bytes(name);
          out.bytes(open);
          out.utf8(st.label);
          out.bytes(close);
          out.value(v);
          out.byte(NEWLINE);
        }
      });
    });
  perStream(F.sourceLost, (st) => st.sourceLost);
  if (switches.push_blocked) perStream(F.pushBlocked, (st) => st.pushBlocked);
  if (switches.stream_closed) perStream(F.streamClosed, (st) => st.closed);
  if (switches.play_per_stream) {
    family(F.playClosed, (out) =>
      each((s, q) => {
        for (const st of s.streams.values()) for (const [proto, h] of st.play ?? []) line(out, F.playClosed.name, `server="${q}",stream="${st.label}",proto="${proto}"`, h.count);
      }),
    );
    family(F.streamPlayDuration, (out) =>
      each((s, q) => {
        for (const st of s.streams.values()) for (const [proto, h] of st.play ?? []) histogramLines(out, F.streamPlayDuration.name, `server="${q}",stream="${st.label}",proto="${proto}"`, h);
      }),
    );
  }
  family(F.playDuration, (out) =>
    each((s, q) => {
      for (const [proto, h] of s.play) histogramLines(out, F.playDuration.name, `server="${q}",proto="${proto}"`, h);
    }),
  );
  family(F.deviceShortage, (out) => each((s, q) => line(out, F.deviceShortage.name, `server="${q}"`, s.deviceShortages)));
  family(F.batchesTotal, (out) => {
    each((s, q) => {
      for (const [code, n] of s.batches) line(out, F.batchesTotal.name, `server="${q}",code="${code}"`, n);
    });
    if (unknownBatches > 0 || out.length > 0) line(out, F.batchesTotal.name, 'server="",code="404"', unknownBatches);
  });
  family(F.rejectedTotal, (out) =>
    each((s, q) => {
      for (const [reason, n] of s.rejected) line(out, F.rejectedTotal.name, `server="${q}",reason="${reason}"`, n);
    }),
  );
  family(F.duplicateTotal, (out) => each((s, q) => line(out, F.duplicateTotal.name, `server="${q}"`, s.duplicates)));
  family(F.withoutIdTotal, (out) => each((s, q) => line(out, F.withoutIdTotal.name, `server="${q}"`, s.withoutId)));
}

const NEWLINE = 0x0a;

/** `name{labels} v` and a newline. */
function line(out: FamilyBytes, name: string, labels: string, v: number): void {
  out.bytes(bytesOf(name));
  out.byte(0x7b);
  out.utf8(labels);
  out.byte(0x7d);
  out.byte(0x20);
  out.value(v);
  out.byte(NEWLINE);
}

function histogramLines(out: FamilyBytes, name: string, labels: string, h: Histogram): void {
  SESSION_BUCKETS.forEach((le, i) => line(out, `${name}_bucket`, `${labels},le="${le}"`, h.counts[i]!));
  line(out, `${name}_bucket`, `${labels},le="+Inf"`, h.count);
  line(out, `${name}_sum`, labels, h.sum);
  line(out, `${name}_count`, labels, h.count);
}

/** HELP and TYPE of a family (the HELP texts of the table have no backslash or newline to escape). */
function headerOf(def: FamilyDef): string {
  return `# HELP ${def.name} ${def.help}\n# TYPE ${def.name} ${def.type}\n`;
}
