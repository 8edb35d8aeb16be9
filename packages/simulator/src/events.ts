/**
 * The events of the simulated server's life, as Flussonic pushes them to its event sinks (the
 * `streamer_event1` kinds of the 23.05 OpenAPI: each object has `event`, `event_id`, `utc_ms` and the
 * fields of its kind). `event_id` counts up from 1 in each run of the simulated server and starts
 * over when it restarts, with `server_started` first. Every event also carries `server_id` (the
 * `id` of /config/stats), so a receiver can tell servers apart.
 *
 * Events are built only while someone listens (an event sink is configured): a world of 100,000
 * sessions without sinks pays nothing for them.
 */
import type { JsonRecord } from './query.js';
import { protoOf, type SimStream } from './streams.js';

/** The kinds the simulator emits (a subset of the 36 of the API). */
export const SIM_EVENT_KINDS = [
  'server_started',
  'source_closed',
  'source_opened',
  'source_started',
  'stream_opened',
  'stream_closed',
  'play_opened',
  'play_closed',
  'push_blocked',
  'push_restored',
  'transcoder_device_insufficient_resources',
] as const;
export type SimEventKind = (typeof SIM_EVENT_KINDS)[number];

export interface SimEvent extends JsonRecord {
  event: SimEventKind;
  event_id: number;
  utc_ms: number;
  server_id: string;
}

export type EventListener = (event: SimEvent) => void;

export class EventEmitter {
  private nextId = 1;
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly serverId: string) {}

  /** True while at least one listener is subscribed; callers skip building fields otherwise. */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(kind: SimEventKind, utcMs: number, fields: JsonRecord = {}): void {
    if (this.listeners.size === 0) return;
    const event = { event: kind, event_id: this.nextId++, utc_ms: utcMs, server_id: this.serverId, ...fields } as SimEvent;
    for (const listener of this.listeners) listener(event);
  }

  /** A new run of the server: ids start over at 1. */
  restart(): void {
    this.nextId = 1;
  }
}

/** source_opened/source_started/source_closed of a stream's active input. */
export function sourceFields(s: SimStream, now: number, closed: boolean, clients: number): JsonRecord {
  const input = s.inputs[s.activeInput];
  const fields: JsonRecord = { media: s.name, type: 'ingest', id: input?.id ?? s.sourceId, source_id: s.sourceId, priority: s.activeInput, opened_at: input?.openedAt ?? s.openedAt };
  if (input) {
    fields.url = input.url;
    fields.proto = protoOf(input.url);
    fields.bytes = input.bytes;
  }
  if (closed) Object.assign(fields, { closed_at: now, bitrate: s.currentKbps, client_count: clients, count: s.retryCount, reason: { error: 'source_lost' } });
  else fields.started_at = now;
  return fields;
}

/** play_opened/play_closed from a session document of GET /sessions. */
export function playFields(doc: JsonRecord): JsonRecord {
  const fields: JsonRecord = {
    media: doc.name ?? null,
    id: doc.id ?? null,
    type: 'play',
    proto: doc.proto ?? null,
    ip: doc.ip ?? null,
    token: doc.token ?? null,
    user_agent: doc.user_agent ?? null,
    country: doc.country ?? null,
    user_id: doc.user_id ?? null,
    opened_at: doc.opened_at ?? null,
    started_at: doc.started_at ?? null,
    bytes: doc.bytes ?? 0,
  };
  if (typeof doc.closed_at === 'number' && typeof doc.opened_at === 'number') {
    fields.closed_at = doc.closed_at;
    // The API's `duration` is whole seconds; opened_at/closed_at (ms) give the exact one.
    fields.duration = Math.round((doc.closed_at - doc.opened_at) / 1000);
  }
  return fields;
}
