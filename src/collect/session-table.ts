import type { IdWordStore } from './session-ids.js';

/**
 * The per-session memory of the sessions collector (sessions.ts): what is remembered of the listed
 * sessions, one slot per session, reused when a session is forgotten. The session's group is a
 * slot of the GroupTable (sessions-groups.ts); its id is found through SessionIds
 * (session-ids.ts), which keeps a UUID's 128 bits in the slot's record. The pending fields
 * (`nextBytes`, `nextClosedAtMs`, `nextGroup`) belong to the walk in progress and mean something
 * only when `seenIn` equals that walk's generation.
 *
 * A slot is one record of 64 bytes (a cache line) in one buffer, read through a Float64 and an
 * Int32 view. A walk lists sessions in id order, which is no order of their slots, so each listed
 * session is a jump to a slot somewhere in megabytes of table. With a column per field and the
 * ids apart, that jump touched seven or eight cache lines; in one record the id that is found and
 * the fields then written are one or two, which saves about a quarter of the sessions collector's
 * CPU beyond JSON.parse. About 64 bytes a session with its id, where an object with boxed numbers
 * and the id string takes ~240.
 */
export class SessionTable implements IdWordStore {
  /** SessionIds keeps a slot's UUID in its record (IdWordStore): found and then used, one cache line. */
  readonly stride = I32_STRIDE;
  readonly first = ID_WORDS;
  private f64 = new Float64Array(0);
  private i32 = new Int32Array(0);
  /** The protocols of the sessions, each once: a record holds its protocol's index here. */
  private protoNames: string[] = [];
  private protoIndex = new Map<string, number>();
  private used = 0;
  private readonly free: number[] = [];

  /** A slot for a session first seen in walk `generation`, its pending fields set. */
  add(group: number, proto: string, openedAtMs: number, generation: number, bytes: number, closedAtMs: number): number {
    const slot = this.free.pop() ?? this.grow();
    const f = slot * F64_STRIDE;
    const i = slot * I32_STRIDE;
    this.f64[f + BYTES] = 0;
    this.f64[f + NEXT_BYTES] = bytes;
    this.f64[f + OPENED_AT] = openedAtMs;
    this.f64[f + NEXT_CLOSED_AT] = closedAtMs;
    this.i32[i + SEEN] = generation;
    this.i32[i + CLOSED] = this.indexOfProto(proto) << 1;
    this.i32[i + GROUP] = group;
    this.i32[i + NEXT_GROUP] = group;
    return slot;
  }

  /** The records as Int32 (IdWordStore). */
  get words(): Int32Array {
    return this.i32;
  }

  /** Every slot handed out has room for its id's words (IdWordStore). */
  reserve(slot: number): void {
    if (slot >= this.used) throw new RangeError(`slot ${slot} was not handed out`);
  }

  /** The generation of the last walk that listed the session. */
  seenIn(slot: number): number {
    return this.i32[slot * I32_STRIDE + SEEN]!;
  }

  /** Records what walk `generation` lists of a known session (its group: setNextGroup()). */
  list(slot: number, generation: number, bytes: number, closedAtMs: number): void {
    const f = slot * F64_STRIDE;
    this.i32[slot * I32_STRIDE + SEEN] = generation;
    this.f64[f + NEXT_BYTES] = bytes;
    this.f64[f + NEXT_CLOSED_AT] = closedAtMs;
  }

  /** The committed group. */
  group(slot: number): number {
    return this.i32[slot * I32_STRIDE + GROUP]!;
  }

  /** The group the walk in progress found the session in. */
  nextGroup(slot: number): number {
    return this.i32[slot * I32_STRIDE + NEXT_GROUP]!;
  }

  setNextGroup(slot: number, group: number): void {
    this.i32[slot * I32_STRIDE + NEXT_GROUP] = group;
  }

  /** `opened_at` in Unix ms; NaN while unknown. */
  openedAtMs(slot: number): number {
    return this.f64[slot * F64_STRIDE + OPENED_AT]!;
  }

  setOpenedAtMs(slot: number, ms: number): void {
    this.f64[slot * F64_STRIDE + OPENED_AT] = ms;
  }

  /** `bytes` at the last committed walk: the base of the next growth. */
  bytes(slot: number): number {
    return this.f64[slot * F64_STRIDE + BYTES]!;
  }

  nextBytes(slot: number): number {
    return this.f64[slot * F64_STRIDE + NEXT_BYTES]!;
  }

  /** `closed_at` as the walk in progress listed it, in Unix ms; NaN for none. */
  nextClosedAtMs(slot: number): number {
    return this.f64[slot * F64_STRIDE + NEXT_CLOSED_AT]!;
  }

  /** Commits the walk's bytes and group of the session. */
  commit(slot: number): void {
    const f = slot * F64_STRIDE;
    const i = slot * I32_STRIDE;
    this.f64[f + BYTES] = this.f64[f + NEXT_BYTES]!;
    this.i32[i + GROUP] = this.i32[i + NEXT_GROUP]!;
  }

  /** Whether the session was counted as closed. */
  closed(slot: number): boolean {
    return (this.i32[slot * I32_STRIDE + CLOSED]! & 1) !== 0;
  }

  setClosed(slot: number): void {
    const at = slot * I32_STRIDE + CLOSED;
    this.i32[at] = this.i32[at]! | 1;
  }

  proto(slot: number): string {
    return this.protoNames[this.i32[slot * I32_STRIDE + CLOSED]! >>> 1]!;
  }

  private indexOfProto(proto: string): number {
    let index = this.protoIndex.get(proto);
    if (index === undefined) {
      index = this.protoNames.push(proto) - 1;
      this.protoIndex.set(proto, index);
    }
    return index;
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
    this.protoNames = [];
    this.protoIndex = new Map();
  }

  private grow(): number {
    if (this.used * F64_STRIDE === this.f64.length) {
      // By half: the table seldom grows (slots are reused), and each slot is 64 bytes.
      const size = Math.max(1024, Math.ceil((this.f64.length / F64_STRIDE) * 1.5));
      const f64 = new Float64Array(size * F64_STRIDE);
      f64.set(this.f64);
      this.f64 = f64;
      this.i32 = new Int32Array(f64.buffer);
    }
    return this.used++;
  }
}

/** A slot's record: 8 Float64 places (64 bytes); its Int32 fields are in the last 4 of them. */
const F64_STRIDE = 8;
const I32_STRIDE = F64_STRIDE * 2;
const BYTES = 0;
const NEXT_BYTES = 1;
const OPENED_AT = 2;
const NEXT_CLOSED_AT = 3;
const SEEN = 8;
/** Bit 0: counted as closed; the bits above: the index of the session's protocol (protoNames). */
const CLOSED = 9;
const GROUP = 10;
const NEXT_GROUP = 11;
/** The four words of the session's UUID (SessionIds). */
const ID_WORDS = 12;
