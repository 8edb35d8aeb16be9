/**
 * The event families' series (src/events/families.ts), kept on the serving thread and rendered
 * in the text format when a scrape asks and something changed. One ServerEvents per known server
 * name; a stream's series live in one StreamEvents, so they are withdrawn together with the
 * stream (when the poll stops exporting it, or the server leaves the config).
 */
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

/** Renders every server's event series, family by family in table order. */
export function renderEvents(servers: ReadonlyMap<string, ServerEvents>, unknownBatches: number, switches: Readonly<Record<EventSwitch, boolean>>): string {
  const parts: string[] = [];
  const family = (def: { readonly name: string }, lines: string[]) => {
    if (lines.length > 0) parts.push(headerOf(def as FamilyDef), ...lines);
  };
  const each = (fn: (server: string, s: ServerEvents, q: string) => void) => {
    for (const [server, s] of servers) fn(server, s, escapeLabelValue(server));
  };
  const lines: string[] = [];
  each((_, s, q) => s.kinds.forEach((v, i) => lines.push(`${F.eventsTotal.name}{server="${q}",event="${KIND_LABELS[i]}"} ${v}\n`)));
  family(F.eventsTotal, lines.splice(0));
  const perStream = (name: string, get: (st: StreamEvents) => number | undefined) => {
    each((_, s, q) => {
      for (const st of s.streams.values()) {
        const v = get(st);
        if (v !== undefined) lines.push(`${name}{server="${q}",stream="${st.label}"} ${v}\n`);
      }
    });
    return lines.splice(0);
  };
  family(F.sourceLost, perStream(F.sourceLost.name, (st) => st.sourceLost));
  if (switches.push_blocked) family(F.pushBlocked, perStream(F.pushBlocked.name, (st) => st.pushBlocked));
  if (switches.stream_closed) family(F.streamClosed, perStream(F.streamClosed.name, (st) => st.closed));
  if (switches.play_per_stream) {
    each((_, s, q) => {
      for (const st of s.streams.values()) for (const [proto, h] of st.play ?? []) lines.push(`${F.playClosed.name}{server="${q}",stream="${st.label}",proto="${proto}"} ${h.count}\n`);
    });
    family(F.playClosed, lines.splice(0));
    each((_, s, q) => {
      for (const st of s.streams.values()) for (const [proto, h] of st.play ?? []) histogramLines(lines, F.streamPlayDuration.name, `server="${q}",stream="${st.label}",proto="${proto}"`, h);
    });
    family(F.streamPlayDuration, lines.splice(0));
  }
  each((_, s, q) => {
    for (const [proto, h] of s.play) histogramLines(lines, F.playDuration.name, `server="${q}",proto="${proto}"`, h);
  });
  family(F.playDuration, lines.splice(0));
  each((_, s, q) => lines.push(`${F.deviceShortage.name}{server="${q}"} ${s.deviceShortages}\n`));
  family(F.deviceShortage, lines.splice(0));
  each((_, s, q) => {
    for (const [code, n] of s.batches) lines.push(`${F.batchesTotal.name}{server="${q}",code="${code}"} ${n}\n`);
  });
  if (unknownBatches > 0 || lines.length > 0) lines.push(`${F.batchesTotal.name}{server="",code="404"} ${unknownBatches}\n`);
  family(F.batchesTotal, lines.splice(0));
  each((_, s, q) => {
    for (const [reason, n] of s.rejected) lines.push(`${F.rejectedTotal.name}{server="${q}",reason="${reason}"} ${n}\n`);
  });
  family(F.rejectedTotal, lines.splice(0));
  each((_, s, q) => lines.push(`${F.duplicateTotal.name}{server="${q}"} ${s.duplicates}\n`));
  family(F.duplicateTotal, lines.splice(0));
  each((_, s, q) => lines.push(`${F.withoutIdTotal.name}{server="${q}"} ${s.withoutId}\n`));
  family(F.withoutIdTotal, lines.splice(0));
  return parts.join('');
}

function histogramLines(out: string[], name: string, labels: string, h: Histogram): void {
  SESSION_BUCKETS.forEach((le, i) => out.push(`${name}_bucket{${labels},le="${le}"} ${h.counts[i]}\n`));
  out.push(`${name}_bucket{${labels},le="+Inf"} ${h.count}\n`, `${name}_sum{${labels}} ${h.sum}\n`, `${name}_count{${labels}} ${h.count}\n`);
}

/** HELP and TYPE of a family (the HELP texts of the table have no backslash or newline to escape). */
function headerOf(def: FamilyDef): string {
  return `# HELP ${def.name} ${def.help}\n# TYPE ${def.name} ${def.type}\n`;
}
