import { widened } from '../typed-arrays.js';

/**
 * The per-session memory of the sessions collector (sessions.ts): what is remembered of the listed
 * sessions, one slot per session in typed arrays (a struct of arrays), reused when a session is
 * forgotten: ~55 bytes a session instead of an object with boxed numbers (~140), and the slots a
 * poll walks lie next to each other. The session's id is in SessionIds (session-ids.ts), its group
 * a slot of the GroupTable (sessions-groups.ts). The `next*` columns belong to the walk in
 * progress and mean something only when `seen` equals that walk's generation.
 */
export class SessionTable {
  /** Committed: bytes at the last committed poll (the base of the next growth). */
  bytes = new Float64Array(0);
  nextBytes = new Float64Array(0);
  openedAtMs = new Float64Array(0);
  nextClosedAtMs = new Float64Array(0);
  seen = new Int32Array(0);
  closed = new Uint8Array(0);
  /** The slot of the session's group in the GroupTable (sessions-groups.ts). */
  group = new Int32Array(0);
  nextGroup = new Int32Array(0);
  proto: string[] = [];
  private used = 0;
  private readonly free: number[] = [];

  /** A slot for a session first seen in walk `generation`. */
  add(group: number, proto: string, openedAtMs: number, generation: number, bytes: number, closedAtMs: number): number {
    const slot = this.free.pop() ?? this.grow();
    this.bytes[slot] = 0;
    this.nextBytes[slot] = bytes;
    this.openedAtMs[slot] = openedAtMs;
    this.nextClosedAtMs[slot] = closedAtMs;
    this.seen[slot] = generation;
    this.closed[slot] = 0;
    this.group[slot] = group;
    this.nextGroup[slot] = group;
    this.proto[slot] = proto;
    return slot;
  }

  /** Frees a slot. */
  release(slot: number): void {
    this.free.push(slot);
  }

  /** One past the highest slot ever handed out (free slots below it included). */
  get slots(): number {
    return this.used;
  }

  /** Forgets every session. */
  clear(): void {
    this.used = 0;
    this.free.length = 0;
    this.proto = [];
  }

  private grow(): number {
    if (this.used === this.seen.length) {
      const size = Math.max(1024, this.seen.length * 2);
      this.bytes = widened(this.bytes, size);
      this.nextBytes = widened(this.nextBytes, size);
      this.openedAtMs = widened(this.openedAtMs, size);
      this.nextClosedAtMs = widened(this.nextClosedAtMs, size);
      this.seen = widened(this.seen, size);
      this.closed = widened(this.closed, size);
      this.group = widened(this.group, size);
      this.nextGroup = widened(this.nextGroup, size);
    }
    return this.used++;
  }
}
