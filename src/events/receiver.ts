/**
 * The event sink receiver (docs/events.md): POST /events/<server> with a JSON array of events.
 * The route handler (src/serve/events-route.ts) asks authorize() before the body is read, then
 * hands the body to receive(); both count their answer in flussonic_exporter_event_batches_total.
 * Counting runs on the serving thread: one JSON.parse and a loop over plain objects, no
 * allocation per event beyond the series a new stream or protocol creates.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { constants, inflateRawSync } from 'node:zlib';
import type { Logger } from 'pino';
import type { EventsConfig, ServerConfig } from '../config/types.js';
import { DEFAULT_MAX_LABEL_VALUE_BYTES } from '../config/bounds.js';
import type { DeflatedPiece } from '../render/gzip-stream.js';
import { mayExceed, truncateLabelValue } from '../render/label-cap.js';
import { prepareJoined } from '../render/prepare.js';
import { compileStreamFilter } from '../lib/name-pattern.js';
import { DedupWindow, runStartIdentity } from './dedup.js';
import { COUNTED_KINDS, PROTOCOLS, shapeProblem } from './kinds.js';
import { eventsSource, Histogram, KIND_INDEX, OTHER_INDEX, ServerEvents, StreamEvents, type RejectReason } from './store.js';

/** What the receiver needs of a server it knows (configured or discovered); no `streams`: every stream passes. */
export type SinkServer = Pick<ServerConfig, 'name' | 'maxLabelValueBytes' | 'staleAfterMs'> & Partial<Pick<ServerConfig, 'streams'>> & { readonly eventsSecret?: string };

export type AuthOutcome = 'ok' | 'unknown' | 'denied';

/** An answer to a batch: status code and a one-line text body. */
export interface BatchAnswer {
  readonly code: 200 | 400 | 401 | 404 | 413;
  readonly text: string;
}

interface Known {
  readonly server: SinkServer;
  readonly digest: Buffer | undefined;
  readonly events: ServerEvents;
  readonly dedup: DedupWindow;
  /** The server's stream filter (`streams.include` / `exclude`), as the streams collector applies it. */
  readonly passes: (stream: string) => boolean;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
const RUN_START = new Set(['server_started', 'change_server_id']);
const SWEEP_MS = 60_000;

export class EventsReceiver {
  private readonly known = new Map<string, Known>();
  private unknownBatches = 0;
  private version = 0;
  private deflated: { readonly version: number; readonly piece: DeflatedPiece } | undefined;
  private readonly noSecretLogged = new Set<string>();

  constructor(
    readonly config: EventsConfig,
    private readonly log: Logger,
  ) {}

  /** The servers whose events are accepted: every configured and discovered one, owned or not. */
  setServers(servers: readonly SinkServer[]): void {
    const names = new Set(servers.map((s) => s.name));
    for (const name of this.known.keys()) if (!names.has(name)) this.known.delete(name);
    for (const server of servers) {
      const had = this.known.get(server.name);
      const d = server.eventsSecret === undefined ? undefined : digest(server.eventsSecret);
      const passes = compileStreamFilter(server.streams ?? {});
      if (had && had.server.eventsSecret === server.eventsSecret && had.server.maxLabelValueBytes === server.maxLabelValueBytes) {
        this.known.set(server.name, { ...had, server, passes });
        continue;
      }
      this.known.set(server.name, { server, digest: d, events: had?.events ?? new ServerEvents(), dedup: had?.dedup ?? new DedupWindow(this.config.dedupWindow), passes });
    }
    this.version++;
  }

  /**
   * The streams a good poll of this server exported (names as capped there): each gets
   * source_lost at 0, and the event series of streams not in the list are withdrawn with them.
   */
  streamsExported(server: string, list: readonly string[]): void {
    const k = this.known.get(server);
    if (!k) return;
    const exported = new Set(list);
    k.events.exported = exported;
    for (const name of k.events.streams.keys()) if (!exported.has(name)) k.events.streams.delete(name);
    for (const name of list) if (!k.events.streams.has(name)) k.events.streams.set(name, new StreamEvents(name));
    this.version++;
  }

  /**
   * Whether the request may post for `server`: the secret as the password of Basic auth or as
   * `token`, compared in constant time. A server without events_secret accepts nothing.
   */
  authorize(server: string, authorization: string | undefined, token: string | undefined): AuthOutcome {
    const k = this.known.get(server);
    if (!k) {
      this.unknownBatches++;
      this.version++;
      return 'unknown';
    }
    const given = token ?? basicPassword(authorization);
    if (!k.digest) {
      if (!this.noSecretLogged.has(server)) {
        this.noSecretLogged.add(server);
        this.log.warn({ server }, 'events for a server without events_secret refused (401): set servers[].events_secret or the template\'s');
      }
    }
    const ok = k.digest !== undefined && given !== undefined && timingSafeEqual(digest(given), k.digest);
    if (!ok) this.answered(k, 401);
    return ok ? 'ok' : 'denied';
  }

  /** Counts a batch refused while its body was read: 413 over the size cap, 400 unreadable. */
  refused(server: string, code: 400 | 413): void {
    const k = this.known.get(server);
    if (k) this.answered(k, code);
  }

  /** Counts one authorized batch; the answer says whether it was counted (2xx) or why not. */
  receive(server: string, body: string): BatchAnswer {
    const k = this.known.get(server);
    if (!k) return { code: 404, text: 'unknown server\n' };
    let batch: unknown;
    try {
      batch = JSON.parse(body);
    } catch {
      return this.answered(k, 400, 'the body is not JSON\n');
    }
    if (!Array.isArray(batch)) return this.answered(k, 400, 'the body is not a JSON array of events\n');
    if (batch.length > this.config.maxEventsPerBatch) return this.answered(k, 413, `more than events.max_events_per_batch (${this.config.maxEventsPerBatch}) events\n`);
    this.count(k, batch);
    return this.answered(k, 200, '');
  }

  /** The event families in the text format (tests; a scrape takes piece()). */
  render(): string {
    return inflateRawSync(this.piece().deflated, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
  }

  /** The event families deflated as a piece of a gzip response, made at most once per change. */
  piece(): DeflatedPiece {
    if (this.deflated?.version !== this.version) {
      const servers = new Map([...this.known].map(([name, k]) => [name, k.events]));
      this.deflated = { version: this.version, piece: prepareJoined(eventsSource(servers, this.unknownBatches, this.config.families)) };
    }
    return this.deflated.piece;
  }

  private answered(k: Known, code: BatchAnswer['code'], text = ''): BatchAnswer {
    const key = String(code);
    k.events.batches.set(key, (k.events.batches.get(key) ?? 0) + 1);
    this.version++;
    return { code, text };
  }

  private count(k: Known, batch: readonly unknown[]): void {
    const s = k.events;
    const cap = k.server.maxLabelValueBytes ?? DEFAULT_MAX_LABEL_VALUE_BYTES;
    const now = Date.now();
    this.sweep(k, now);
    for (const item of batch) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        this.reject(s, 'not_object');
        continue;
      }
      const e = item as Record<string, unknown>;
      const kind = e.event;
      if (typeof kind !== 'string') {
        this.reject(s, 'no_kind');
        continue;
      }
      const fields = Object.hasOwn(COUNTED_KINDS, kind) ? COUNTED_KINDS[kind] : undefined;
      const id = e.event_id;
      if (shapeProblem(e, fields) !== undefined) {
        this.reject(s, 'shape');
        continue;
      }
      if (id == null) s.withoutId++;
      else if (!k.dedup.admit(id as number, RUN_START.has(kind) ? runStartIdentity(kind, e.utc_ms, e.instance_id) : undefined)) {
        s.duplicates++;
        continue;
      }
      s.kinds[KIND_INDEX.get(kind) ?? OTHER_INDEX]!++;
      if (fields === undefined) continue;
      // A stream the server's stream filter keeps out gets no series: its events count in the server's totals only.
      const media = typeof e.media === 'string' && e.media !== '' && k.passes(e.media) ? (mayExceed(e.media, cap) ? truncateLabelValue(e.media, cap) : e.media) : undefined;
      switch (kind) {
        case 'source_closed':
          if (media !== undefined) this.stream(s, media, now).sourceLost++;
          break;
        case 'push_blocked':
          if (media !== undefined && this.config.families.push_blocked) {
            const st = this.stream(s, media, now);
            st.pushBlocked = (st.pushBlocked ?? 0) + 1;
          }
          break;
        case 'stream_closed':
          if (media !== undefined && this.config.families.stream_closed) {
            const st = this.stream(s, media, now);
            st.closed = (st.closed ?? 0) + 1;
          }
          break;
        case 'play_closed':
          this.playClosed(s, e, media, now);
          break;
        case 'transcoder_device_insufficient_resources':
          s.deviceShortages++;
          break;
      }
    }
    this.version++;
  }

  private playClosed(s: ServerEvents, e: Record<string, unknown>, media: string | undefined, now: number): void {
    const proto = typeof e.proto === 'string' && PROTOCOLS.has(e.proto) ? e.proto : 'other';
    const seconds = sessionSeconds(e);
    let h = s.play.get(proto);
    if (!h) s.play.set(proto, (h = new Histogram()));
    if (seconds !== undefined) h.observe(seconds);
    if (media === undefined || !this.config.families.play_per_stream) return;
    const st = this.stream(s, media, now);
    st.play ??= new Map();
    let sh = st.play.get(proto);
    if (!sh) st.play.set(proto, (sh = new Histogram()));
    if (seconds !== undefined) sh.observe(seconds);
  }

  /** The stream's series, made on its first event. */
  private stream(s: ServerEvents, name: string, now: number): StreamEvents {
    let st = s.streams.get(name);
    if (!st) s.streams.set(name, (st = new StreamEvents(name)));
    st.lastEventAt = now;
    return st;
  }

  /**
   * A server this replica does not poll has no list of its streams: a stream whose last event is
   * older than the server's stale_after goes (checked at most once a minute, when a batch comes).
   */
  private sweep(k: Known, now: number): void {
    const s = k.events;
    if (s.exported !== undefined || now - s.lastSweep < SWEEP_MS) return;
    s.lastSweep = now;
    for (const [name, st] of s.streams) if (now - st.lastEventAt > k.server.staleAfterMs) s.streams.delete(name);
  }

  private reject(s: ServerEvents, reason: RejectReason): void {
    s.rejected.set(reason, s.rejected.get(reason)! + 1);
  }
}

/**
 * closed_at - opened_at (ms) when both are there and in order, else `duration` (s); undefined when
 * neither is. Each is in its range (shapeProblem), so the length is finite, 0 to SESSION_SECONDS.max.
 */
function sessionSeconds(e: Record<string, unknown>): number | undefined {
  const { opened_at: opened, closed_at: closed, duration } = e;
  if (typeof opened === 'number' && typeof closed === 'number' && closed >= opened) return (closed - opened) / 1000;
  if (typeof duration === 'number') return duration;
  return undefined;
}

/** The password of a Basic authorization header (the user is ignored). */
function basicPassword(header: string | undefined): string | undefined {
  if (header === undefined || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}
