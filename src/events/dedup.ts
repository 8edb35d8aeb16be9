/**
 * Exactly once per (server, event_id): the ids of one server run increase, so the recent ones
 * are a bitset over the sliding range (newest - size, newest]. An id above it advances the range;
 * one in it is new once; one below it, or a new `server_started` / `change_server_id` whose id is
 * not above the newest, starts a new run (the server restarted and numbers from the start again).
 * A resend older than the window is counted again: with the default 65,536 ids that is a batch
 * resent after more than 65,536 newer events of its server (docs/events.md).
 */
export class DedupWindow {
  private readonly bits: Uint32Array;
  /** The newest id seen in this run; -1 before the first. */
  private newest = -1;

  constructor(readonly size: number) {
    this.bits = new Uint32Array(Math.ceil(size / 32));
  }

  /** Whether the event is new (and now remembered); `runStart` for server_started / change_server_id. */
  admit(id: number, runStart: boolean): boolean {
    if (id > this.newest) {
      this.advance(id);
      this.mark(id);
      return true;
    }
    const inWindow = id > this.newest - this.size && id >= 0;
    if (inWindow && this.has(id)) return false;
    if (!inWindow || runStart) {
      // A new run of the server: its ids start over.
      this.bits.fill(0);
      this.newest = id;
    }
    this.mark(id);
    return true;
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
