/**
 * Gives the buffers of replaced expositions back as soon as no response can still be sending them.
 *
 * A target's exposition arrives from its worker as transferred buffers, and the next poll replaces
 * them. Left to the garbage collector, a replaced buffer lives until the serving thread's next full
 * collection: its wrapper has outlived a few minor ones by then, and the serving thread allocates
 * too little to collect often. Measured on the 10,000-stream server: 2 MB more per poll, 14 MB
 * after eight polls; 20-25 MB with 40 servers. Here each buffer is handed back (`free`: the pool
 * transfers it to a worker, whose next minor collection frees it) once it is provably unused.
 *
 * Provably unused: the exposition has versions (one per change). A response leases the version it
 * was built from; a buffer is live from the version it came in to the last one before it was
 * replaced, and is freed only when no open lease falls in that range. A response whose writes have
 * all called back releases its lease; one that ended otherwise (a plain answer cut off while it
 * was inflated) abandons it, and so does one still open after `maxLeaseMs` (a client reading very
 * slowly): the buffers its version saw are then never freed here but left to the garbage
 * collector, which knows whether an inflate still holds them. Freeing is an optimisation; leaving
 * is always safe.
 */

/** A hold on the buffers of one exposition version, for one response. */
export interface Lease {
  /** The response's writes have all called back: nothing holds the buffers any more. */
  release(): void;
  /** The response ended otherwise: its buffers are left to the garbage collector. */
  abandon(): void;
}

export const NO_LEASE: Lease = { release: () => undefined, abandon: () => undefined };

/** Buffers tracked from the version they became live. */
export interface Tracked {
  readonly first: number;
  readonly buffers: readonly ArrayBuffer[];
}

interface Retired extends Tracked {
  readonly last: number;
}

interface OpenLease {
  readonly version: number;
  readonly at: number;
}

/** Responses open longer than this abandon their lease (two minutes: far above a scrape timeout). */
export const MAX_LEASE_MS = 120_000;

export class Reclaimer {
  private readonly leases = new Set<OpenLease>();
  /** Versions of abandoned leases: buffers live in one of them are left to the garbage collector. */
  private pinned: number[] = [];
  private retired: Retired[] = [];
  /** Tracked buffers not yet retired, counted by their first version (to forget old pins). */
  private readonly live = new Map<number, number>();

  constructor(
    private readonly free: (buffers: ArrayBuffer[]) => void,
    private readonly now: () => number = Date.now,
    private readonly maxLeaseMs = MAX_LEASE_MS,
  ) {}

  /**
   * Starts tracking the buffers of `parts` live from `version` on. Only buffers a part spans
   * whole are taken (a slice of a shared pool is never handed over).
   */
  track(version: number, parts: Iterable<Uint8Array>): Tracked {
    const buffers = new Set<ArrayBuffer>();
    for (const part of parts) if (spansWhole(part)) buffers.add(part.buffer as ArrayBuffer);
    this.live.set(version, (this.live.get(version) ?? 0) + 1);
    return { first: version, buffers: [...buffers] };
  }

  /** The tracked buffers were last live in version `last`; they are freed once no lease needs them. */
  retire(tracked: Tracked, last: number): void {
    const count = (this.live.get(tracked.first) ?? 1) - 1;
    if (count > 0) this.live.set(tracked.first, count);
    else this.live.delete(tracked.first);
    if (tracked.buffers.length > 0) this.retired.push({ ...tracked, last });
    this.sweep();
  }

  /** A response's hold on the buffers live in `version`. */
  lease(version: number): Lease {
    const open: OpenLease = { version, at: this.now() };
    this.leases.add(open);
    const end = (pin: boolean) => {
      if (!this.leases.delete(open)) return;
      if (pin) this.pin(version);
      this.sweep();
    };
    return { release: () => end(false), abandon: () => end(true) };
  }

  /** Buffers retired and waiting for a lease to end (tests). */
  get waiting(): number {
    let n = 0;
    for (const r of this.retired) n += r.buffers.length;
    return n;
  }

  private pin(version: number): void {
    if (!this.pinned.includes(version)) this.pinned.push(version);
  }

  private sweep(): void {
    const now = this.now();
    for (const open of this.leases) {
      if (now - open.at < this.maxLeaseMs) continue;
      this.leases.delete(open);
      this.pin(open.version);
    }
    if (this.retired.length > 0) {
      const kept: Retired[] = [];
      const leased = Array.from(this.leases, (open) => open.version);
      for (const r of this.retired) {
        const liveIn = (version: number) => version >= r.first && version <= r.last;
        if (this.pinned.some(liveIn)) continue; // left to the GC
        if (leased.some(liveIn)) kept.push(r);
        else this.free([...r.buffers]);
      }
      this.retired = kept;
    }
    // A pin matters while a buffer live in its version may still be retired.
    if (this.pinned.length > 0) {
      let oldestLive = Infinity;
      for (const first of this.live.keys()) oldestLive = Math.min(oldestLive, first);
      for (const r of this.retired) oldestLive = Math.min(oldestLive, r.first);
      this.pinned = this.pinned.filter((v) => v >= oldestLive);
    }
  }
}

/** Whether a part alone spans its ArrayBuffer (so handing the buffer over takes nothing else). */
function spansWhole(part: Uint8Array): boolean {
  return part.buffer instanceof ArrayBuffer && part.byteOffset === 0 && part.byteLength === part.buffer.byteLength && part.byteLength > 0;
}
