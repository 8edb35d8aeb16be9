/**
 * Delivery of one http(s) event sink, on the simulator's clock: events wait in a buffer for
 * `throttle_delay` seconds (more than 100 waiting: sent at once), then go out as one POST of a JSON
 * array (at most 1,000 events). A 2xx confirms the batch; anything else, or no answer, keeps it and
 * sends the same batch (the same event_ids) again every `resend_timeout` seconds, one batch at a
 * time, in order. At most `resend_limit` events are kept (unlimited in Flussonic; 10,000 here):
 * beyond it the oldest are dropped and counted.
 *
 * Userinfo in the sink URL (`http://user:secret@host/...`) becomes `Authorization: Basic` and is
 * left out of the request URL; the query string is sent as given. With a manual clock nothing
 * happens between advance() calls: pump() sends what is due, settled() waits for the answers.
 */
import type { SimEvent } from './events.js';
import type { JsonRecord } from './query.js';

/** Events in one POST at most. */
export const MAX_BATCH = 1000;
/** Waiting events that make a batch go out before its throttle delay is over (Flussonic: 100). */
const FLUSH_AT = 100;
/** resend_limit when the sink sets none. */
export const DEFAULT_RESEND_LIMIT = 10_000;
const DEFAULT_THROTTLE_S = 1;
const DEFAULT_RESEND_TIMEOUT_S = 10;
/** A POST without an answer after this long (real time) failed. */
const POST_TIMEOUT_MS = 10_000;

export interface DeliveryDeps {
  /** Simulated time (Unix ms). */
  now(): number;
  /** Events sent again (batch resends) and events dropped: /config/stats `events`. */
  count(kind: 'resent_events' | 'dropped_events', n: number): void;
}

export interface SinkFault {
  /** Send each of the next N confirmed batches once more after its 2xx (a receiver's dedup test). */
  replayConfirmed?: number;
}

export interface SinkState {
  /** Events waiting (not yet in a batch) and in the batch being sent or waiting to be resent. */
  readonly queued: number;
  /** POSTs made (first sends, resends and replays). */
  readonly posts: number;
  readonly confirmedBatches: number;
  readonly confirmedEvents: number;
  /** Answers that were not 2xx, or no answer. */
  readonly failures: number;
  /** Batches sent again after a failure. */
  readonly resentBatches: number;
  /** Confirmed batches sent again by the replay fault. */
  readonly replayedBatches: number;
  /** Events dropped because more than resend_limit were kept. */
  readonly droppedEvents: number;
  /** Status of the last answer; 0 = no answer (connection error, timeout). */
  readonly lastStatus: number | undefined;
}

interface Target {
  url: string;
  authorization: string | undefined;
}

/** The request URL without userinfo, and the Basic credentials the userinfo carried. */
export function sinkTarget(raw: string): Target {
  const url = new URL(raw);
  let authorization: string | undefined;
  if (url.username !== '' || url.password !== '') {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    authorization = 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
    url.username = '';
    url.password = '';
  }
  return { url: url.href, authorization };
}

export class SinkDelivery {
  private pending: SimEvent[] = [];
  private pendingSince = 0;
  /** The batch on its way or waiting to be resent; the oldest events. */
  private current: { events: SimEvent[]; sent: boolean } | undefined;
  private nextAttemptAt = 0;
  private replay: SimEvent[] | undefined;
  private inFlight: Promise<void> | undefined;
  private throttleMs = DEFAULT_THROTTLE_S * 1000;
  private resendMs = DEFAULT_RESEND_TIMEOUT_S * 1000;
  private limit = DEFAULT_RESEND_LIMIT;
  private target: Target = { url: '', authorization: undefined };
  private fault: SinkFault = {};
  private readonly abort = new AbortController();
  private stopped = false;
  private counts = { posts: 0, confirmedBatches: 0, confirmedEvents: 0, failures: 0, resentBatches: 0, replayedBatches: 0, droppedEvents: 0 };
  private lastStatus: number | undefined;

  constructor(private readonly deps: DeliveryDeps) {}

  static idleState(): SinkState {
    return { queued: 0, posts: 0, confirmedBatches: 0, confirmedEvents: 0, failures: 0, resentBatches: 0, replayedBatches: 0, droppedEvents: 0, lastStatus: undefined };
  }

  configure(config: JsonRecord): void {
    const int = (v: unknown, fallback: number) => (typeof v === 'number' ? v : fallback);
    this.throttleMs = int(config.throttle_delay, DEFAULT_THROTTLE_S) * 1000;
    this.resendMs = int(config.resend_timeout ?? config.resend_notifications_timeout, DEFAULT_RESEND_TIMEOUT_S) * 1000;
    this.limit = Math.max(1, int(config.resend_limit ?? config.resend_notifications_limit, DEFAULT_RESEND_LIMIT));
    this.target = sinkTarget(config.url as string);
    this.trim();
  }

  setFault(fault: SinkFault | null): void {
    const n = fault?.replayConfirmed;
    if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw new RangeError(`replayConfirmed must be an integer >= 0, got ${n}`);
    this.fault = { ...(fault ?? {}) };
  }

  state(): SinkState {
    return { ...this.counts, queued: this.pending.length + (this.current?.events.length ?? 0), lastStatus: this.lastStatus };
  }

  enqueue(event: SimEvent): void {
    if (this.stopped) return;
    if (this.pending.length === 0) this.pendingSince = this.deps.now();
    this.pending.push(event);
    this.trim();
  }

  flying(): Promise<void> | undefined {
    return this.inFlight;
  }

  /** Send what is due now (nothing while a POST is on its way). */
  pump(): void {
    if (this.stopped || this.inFlight) return;
    const now = this.deps.now();
    if (this.replay) {
      const events = this.replay;
      this.replay = undefined;
      this.counts.replayedBatches++;
      this.post(events, 'replay');
      return;
    }
    if (this.current) {
      if (now < this.nextAttemptAt) return;
      if (this.current.sent) {
        this.counts.resentBatches++;
        this.deps.count('resent_events', this.current.events.length);
      }
      this.current.sent = true;
      this.post(this.current.events, 'batch');
      return;
    }
    if (this.pending.length === 0) return;
    if (this.pending.length <= FLUSH_AT && now < this.pendingSince + this.throttleMs) return;
    const events = this.pending.splice(0, MAX_BATCH);
    if (this.pending.length > 0) this.pendingSince = now;
    this.current = { events, sent: true };
    this.post(events, 'batch');
  }

  /** The server restarted: the buffer (in memory) is lost. */
  reset(): void {
    this.pending = [];
    this.current = undefined;
    this.replay = undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.inFlight;
  }

  /** Keep at most `limit` events: drop the oldest (the batch waiting to be resent first). */
  private trim(): void {
    let excess = this.pending.length + (this.current?.events.length ?? 0) - this.limit;
    if (excess <= 0) return;
    let dropped = 0;
    if (this.current && !this.inFlight) {
      const n = Math.min(excess, this.current.events.length);
      this.current.events.splice(0, n);
      if (this.current.events.length === 0) this.current = undefined;
      excess -= n;
      dropped += n;
    }
    const n = Math.min(excess, this.pending.length);
    this.pending.splice(0, n);
    dropped += n;
    this.counts.droppedEvents += dropped;
    this.deps.count('dropped_events', dropped);
  }

  private post(events: SimEvent[], kind: 'batch' | 'replay'): void {
    this.counts.posts++;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.target.authorization) headers.authorization = this.target.authorization;
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(POST_TIMEOUT_MS)]);
    const sent = fetch(this.target.url, { method: 'POST', headers, body: JSON.stringify(events), signal, redirect: 'manual' })
      .then(async (res) => {
        await res.arrayBuffer().catch(() => undefined);
        return res.status;
      })
      .catch(() => 0);
    this.inFlight = sent.then((status) => {
      this.inFlight = undefined;
      this.lastStatus = status;
      this.answered(events, kind, status >= 200 && status < 300);
      this.pump();
    });
  }

  private answered(events: SimEvent[], kind: 'batch' | 'replay', ok: boolean): void {
    if (kind === 'replay') return;
    if (!ok) {
      this.counts.failures++;
      this.nextAttemptAt = this.deps.now() + this.resendMs;
      // Events dropped from the front while it was on its way: the batch keeps what is left.
      return;
    }
    if (this.current?.events === events) this.current = undefined;
    this.counts.confirmedBatches++;
    this.counts.confirmedEvents += events.length;
    if (this.fault.replayConfirmed && this.fault.replayConfirmed > 0) {
      this.fault.replayConfirmed--;
      this.replay = events;
    }
  }
}
