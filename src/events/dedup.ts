import { createHash } from 'node:crypto';

/**
 * Exactly once per (server, event_id): the ids of one server run increase, so the recent ones
 * are a bitset over the sliding range (newest - size, newest]. An id above it advances the range;
 * one in it is new once; one below it starts a new run (the server restarted and numbers from the
 * start again). A run start (`server_started` / `change_server_id`) whose id is not above the
 * newest starts a new run too, unless it is a resend: the same event as a run start of this run
 * with that id (runStartIdentity()). A resend older than the window is counted again: with the
 * default 65,536 ids that is a batch resent after more than 65,536 newer events of its server
 * (docs/events.md).
 */
export class DedupWindow {
  private readonly bits: Uint32Array;
  /** The newest id seen in this run; -1 before the first. */
  private newest = -1;
  /** The run starts of this run: ids and identities, the latest RUN_STARTS_KEPT. */
  private readonly startIds: number[] = [];
  private readonly startIdentities: string[] = [];

  constructor(readonly size: number) {
    this.bits = new Uint32Array(Math.ceil(size / 32));
  }

  /**
   * Whether the event is new (and now remembered). `runStart` is the identity of a server_started /
   * change_server_id (runStartIdentity()), undefined for any other event.
   */
  admit(id: number, runStart?: string): boolean {
    if (id > this.newest) {
      this.advance(id);
      this.mark(id);
      if (runStart !== undefined) this.rememberStart(id, runStart);
      return true;
    }
    const inWindow = id > this.newest - this.size && id >= 0;
    if (inWindow && this.has(id) && (runStart === undefined || this.isStartOfRun(id, runStart))) return false;
    if (!inWindow || runStart !== undefined) {
      // A new run of the server: its ids start over.
      this.bits.fill(0);
      this.newest = id;
      this.startIds.length = 0;
      this.startIdentities.length = 0;
    }
    this.mark(id);
    if (runStart !== undefined) this.rememberStart(id, runStart);
    return true;
  }

  /** Whether this run has a run start with this id and identity (so the one given is a resend). */
  private isStartOfRun(id: number, identity: string): boolean {
    for (let i = 0; i < this.startIds.length; i++) if (this.startIds[i] === id && this.startIdentities[i] === identity) return true;
    return false;
  }

  private rememberStart(id: number, identity: string): void {
    if (this.startIds.length === RUN_STARTS_KEPT) {
      this.startIds.shift();
      this.startIdentities.shift();
    }
    this.startIds.push(id);
    this.startIdentities.push(identity);
  }

  private advance(id: number): void {
    const from = this.newest + 1;
    if (this.newest < 0 || id - this.newest >= this.size) this.bits.fill(0);
    else for (let i = from; i <= id; i++) this.clear(i);
    this.newest = id;
  }

  private slot(id: number): number {
    return id % this.size;
  }

  private has(id: number): boolean {
    const s = this.slot(id);
    return (this.bits[s >>> 5]! & (1 << (s & 31))) !== 0;
  }

  private mark(id: number): void {
    const s = this.slot(id);
    this.bits[s >>> 5]! |= 1 << (s & 31);
  }

  private clear(id: number): void {
    const s = this.slot(id);
    this.bits[s >>> 5]! &= ~(1 << (s & 31));
  }
}

/**
 * Run starts remembered per run. A run has one server_started and rarely a change_server_id; a
 * resend of a run start older than the last few is taken for a new run.
 */
const RUN_STARTS_KEPT = 4;
/** Longer instance ids are kept as a digest: the memory per server stays a few hundred bytes. */
const INSTANCE_ID_KEPT = 64;

/**
 * What tells a resent run start from the next run's with the same id: its kind, `utc_ms` and
 * `instance_id` (both events carry them; a restarted server has a new instance and a later time).
 * Run starts of one kind without either look the same: one whose id this run has as such a run
 * start is taken for a resend.
 */
export function runStartIdentity(kind: string, utcMs: unknown, instanceId: unknown): string {
  const instance = typeof instanceId === 'string' && instanceId.length > INSTANCE_ID_KEPT ? createHash('sha256').update(instanceId, 'utf8').digest('base64') : instanceId;
  return JSON.stringify([kind, utcMs ?? null, instance ?? null]);
}
