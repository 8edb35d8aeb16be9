/**
 * The events of the simulated world, as the world's changes make them: a source that drops and
 * returns, streams created and deleted, pushes blocked for a while, device shortages, the server's
 * start. Scripted ones (dropSource, blockPush, deviceShortage) are what tests use to make an event
 * happen on demand; the world calls the others as it changes. Fields: events.ts.
 */
import { EventEmitter, sourceFields } from './events.js';
import type { JsonRecord } from './query.js';
import type { SimStream } from './streams.js';

function requireDuration(what: string, ms: number): void {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`${what}: ms must be a finite number >= 0, got ${ms}`);
}

export class WorldEvents {
  readonly emitter: EventEmitter;
  /** Events due later (push_restored), in time order. */
  private scheduled: { at: number; run: (now: number) => void }[] = [];

  constructor(
    serverId: string,
    private readonly clientsOf: (stream: string) => number,
  ) {
    this.emitter = new EventEmitter(serverId);
  }

  get active(): boolean {
    return this.emitter.active;
  }

  /** A stream's `alive` changed: its source closed, or opened and started. */
  sourceChanged(s: SimStream, now: number): void {
    if (!this.emitter.active) return;
    const clients = this.clientsOf(s.name);
    if (!s.alive) this.emitter.emit('source_closed', now, sourceFields(s, now, true, clients));
    else {
      this.emitter.emit('source_opened', now, sourceFields(s, now, false, clients));
      this.emitter.emit('source_started', now, sourceFields(s, now, false, clients));
    }
  }

  streamOpened(s: SimStream, now: number): void {
    if (this.emitter.active) this.emitter.emit('stream_opened', now, { media: s.name, id: s.id, type: 'stream', opened_at: now });
  }

  streamClosed(s: SimStream, now: number): void {
    if (this.emitter.active) this.emitter.emit('stream_closed', now, { media: s.name, id: s.id, type: 'stream', opened_at: s.openedAt, closed_at: now, reason: 'deleted', bytes: s.bytesIn, bytes_out: s.bytesOut });
  }

  /** The source drops now and comes back `ms` later (the stream's own recovery, at a step). */
  dropSource(s: SimStream, now: number, ms: number): void {
    requireDuration('dropSource(name, ms)', ms);
    if (!s.alive) throw new Error(`stream ${JSON.stringify(s.name)} is down already; its source cannot drop`);
    s.pinned = false;
    s.goDown(now, now + ms);
    this.sourceChanged(s, now);
  }

  /** Push `index` is blocked now and restored at the first step `ms` or more later. */
  blockPush(s: SimStream, index: number, now: number, ms: number): void {
    requireDuration('blockPush(name, index, ms)', ms);
    const pushes = Array.isArray(s.config.pushes) ? (s.config.pushes as JsonRecord[]) : [];
    const push = pushes[index];
    const runtime = s.pushes[index];
    if (!push || !runtime) throw new Error(`stream ${JSON.stringify(s.name)} has no push ${index} (it has ${pushes.length})`);
    const fields = (): JsonRecord => ({ media: s.name, id: runtime.id, type: 'push', url: push.url as string, opened_at: runtime.openedAt, bytes: runtime.bytes });
    this.emitter.emit('push_blocked', now, fields());
    this.schedule(now + ms, (at) => this.emitter.emit('push_restored', at, { ...fields(), duration: Math.round(ms / 1000) }));
  }

  deviceShortage(id: number, now: number, reason: 'auto_resource_allocation' | 'manual_resource_allocation'): void {
    this.emitter.emit('transcoder_device_insufficient_resources', now, { deviceid: id, reason });
  }

  /** `server_started`: the first event of a run (restart: ids start over first). */
  serverStarted(now: number, version: string, instanceId: string, restart: boolean): void {
    if (restart) this.emitter.restart();
    this.emitter.emit('server_started', now, { previous_state: 'shutdown', version, instance_id: instanceId });
  }

  /** Run what is due by `now` (called by each world step). */
  runDue(now: number): void {
    while (this.scheduled.length > 0 && this.scheduled[0]!.at <= now) this.scheduled.shift()!.run(now);
  }

  private schedule(at: number, run: (now: number) => void): void {
    let i = this.scheduled.length;
    while (i > 0 && this.scheduled[i - 1]!.at > at) i--;
    this.scheduled.splice(i, 0, { at, run });
  }
}
