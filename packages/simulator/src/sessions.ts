/**
 * Simulated play sessions (section 2.4). Open sessions are kept in an array sorted by `id` (the
 * collection's default order), with time-ordered ids so new sessions append. Bytes grow with each
 * session's bitrate; with churn on, sessions close (mean lifetime 20 minutes, 45 s on a stream that
 * is down) and new ones arrive so the count hovers around the configured target.
 */
import type { JsonRecord } from './query.js';
import { timeOrderedUuid, type Rng } from './rng.js';

export interface SessionStream {
  readonly name: string;
  readonly kbps: number;
  readonly alive: boolean;
  readonly tracks: readonly JsonRecord[];
}

/** What a test may set on a session it opens; everything else is generated. */
export interface SessionInit {
  readonly id?: string;
  /** Stream name (the session's `name`). */
  readonly name?: string;
  readonly proto?: string;
  readonly ip?: string;
  readonly country?: string;
  readonly bytes?: number;
  readonly opened_at?: number;
  readonly token?: string;
  readonly user_id?: string;
  readonly user_agent?: string;
  readonly dvr?: boolean;
  readonly secure?: boolean;
  readonly segments_container?: string;
  readonly manifest_type?: string;
  /** Bytes per second this session adds as time moves (default: the stream's bitrate). */
  readonly bytesPerSecond?: number;
}

interface SessionEntry {
  doc: JsonRecord;
  /** Bytes per ms. */
  rate: number;
  open: boolean;
  /** When a closed session leaves the collection. */
  removeAt: number;
}

const MEAN_LIFETIME = 20 * 60_000;
const MEAN_LIFETIME_DEAD_STREAM = 45_000;

const PROTOS = ['hls', 'dash', 'llhls', 'rtmp', 'webrtc', 'tshttp', 'srt', 'mseld'] as const;
const PROTO_WEIGHTS = [45, 20, 6, 6, 6, 9, 4, 4];
const COUNTRIES = ['us', 'de', 'gb', 'fr', 'br', 'in', 'nl', 'es', 'it', 'pl', 'jp', 'ca'] as const;
const COUNTRY_WEIGHTS = [30, 12, 10, 9, 8, 7, 5, 5, 4, 4, 3, 3];
const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'VLC/3.0.20 LibVLC/3.0.20',
  'ExoPlayerLib/2.19.1',
  'Lavf/60.3.100',
] as const;

export class SessionsStore {
  /** Served collection (open plus lingering closed), sorted by id. */
  private entries: SessionEntry[] = [];
  private docsCache: JsonRecord[] | undefined;
  private byId = new Map<string, SessionEntry>();
  private perStream = new Map<string, number>();
  private perStreamProto = new Map<string, Map<string, number>>();
  private openCount = 0;
  private closedListed = 0;
  private counter = 0;
  /** Called for each session opened after populate() and each one closed (play events). */
  onOpen: ((doc: JsonRecord) => void) | undefined;
  onClose: ((doc: JsonRecord) => void) | undefined;

  constructor(
    private readonly rng: Rng,
    public target: number,
    /** How long a closed session stays listed with `closed_at` (0: it vanishes at once). */
    private readonly lingerMs: number,
  ) {}

  get size(): number {
    return this.openCount;
  }

  /** What GET /sessions serves, in id order. Do not mutate. */
  served(): readonly JsonRecord[] {
    this.docsCache ??= this.entries.map((e) => e.doc);
    return this.docsCache;
  }

  /** Open sessions (no `closed_at`), in id order. */
  list(): JsonRecord[] {
    return this.entries.filter((e) => e.open).map((e) => e.doc);
  }

  get(id: string): JsonRecord | undefined {
    return this.byId.get(id)?.doc;
  }

  clientsOf(stream: string): number {
    return this.perStream.get(stream) ?? 0;
  }

  clientsByProto(stream: string): ReadonlyMap<string, number> {
    return this.perStreamProto.get(stream) ?? EMPTY;
  }

  /** Fill the world with `target` sessions of various ages. */
  populate(now: number, pick: (rng: Rng) => SessionStream | undefined): void {
    const made: SessionEntry[] = [];
    for (let i = 0; i < this.target; i++) {
      const stream = pick(this.rng);
      if (!stream) break;
      const age = Math.min(6 * 3600_000, Math.round(-Math.log(1 - this.rng.next()) * MEAN_LIFETIME));
      made.push(this.makeEntry(stream, {}, now - age, now));
    }
    made.sort((a, b) => compareIds(a.doc.id as string, b.doc.id as string));
    for (const e of made) this.track(e);
    this.entries = made;
    this.docsCache = undefined;
  }

  open(stream: SessionStream, init: SessionInit, now: number): JsonRecord {
    if (init.id !== undefined && this.byId.has(init.id)) throw new Error(`session ${init.id} exists already`);
    const entry = this.makeEntry(stream, init, init.opened_at ?? now, now);
    this.insert([entry]);
    return entry.doc;
  }

  close(id: string, now: number): boolean {
    const entry = this.byId.get(id);
    if (!entry || !entry.open) return false;
    this.closeEntry(entry, now);
    this.removeExpired(now);
    return true;
  }

  /** Close every session of a stream (it was deleted). */
  closeStream(name: string, now: number): void {
    const closing = new Set<SessionEntry>();
    for (const e of this.entries) if (e.open && e.doc.name === name) closing.add(e);
    for (const e of closing) this.closeEntry(e, now);
    this.removeExpired(now);
  }

  /**
   * Move sessions forward by dt: bytes grow on streams that flow (`stopped` lists those that do
   * not), and with churn some close and new ones arrive. One pass over the array: this runs on
   * 100,000 sessions.
   */
  step(dt: number, now: number, churn: boolean, stopped: ReadonlySet<string>, pick: (rng: Rng) => SessionStream | undefined): void {
    const pClose = 1 - Math.exp(-dt / MEAN_LIFETIME);
    const pCloseStopped = 1 - Math.exp(-dt / MEAN_LIFETIME_DEAD_STREAM);
    const checkStopped = stopped.size > 0;
    const closing: SessionEntry[] = [];
    for (const e of this.entries) {
      if (!e.open) continue;
      const doc = e.doc;
      const flowing = !checkStopped || !stopped.has(doc.name as string);
      if (flowing) doc.bytes = (doc.bytes as number) + Math.round(e.rate * dt);
      doc.updated_at = now;
      if (churn && this.rng.next() < (flowing ? pClose : pCloseStopped)) closing.push(e);
    }
    for (const e of closing) this.closeEntry(e, now);
    this.removeExpired(now);

    if (churn && this.target > 0) {
      // Arrivals of an M/M/inf queue whose mean population is the target.
      const arrivals = Math.min(this.target * 2, this.rng.poisson((this.target * dt) / MEAN_LIFETIME));
      const made: SessionEntry[] = [];
      for (let i = 0; i < arrivals; i++) {
        const stream = pick(this.rng);
        if (!stream) break;
        made.push(this.makeEntry(stream, {}, now - this.rng.int(0, Math.max(0, Math.min(dt, 60_000))), now));
      }
      if (made.length > 0) this.insert(made);
    }
  }

  private closeEntry(e: SessionEntry, now: number): void {
    if (!e.open) return;
    e.open = false;
    e.removeAt = now + this.lingerMs;
    e.doc.closed_at = now;
    e.doc.updated_at = now;
    this.closedListed++;
    this.untrack(e);
    this.onClose?.(e.doc);
  }

  /** Drop closed sessions whose linger time is over (one in-place pass). */
  private removeExpired(now: number): void {
    if (this.closedListed === 0) return;
    const entries = this.entries;
    let w = 0;
    for (let r = 0; r < entries.length; r++) {
      const e = entries[r] as SessionEntry;
      if (e.open || e.removeAt > now) entries[w++] = e;
      else {
        this.byId.delete(e.doc.id as string);
        this.closedListed--;
      }
    }
    if (w !== entries.length) {
      entries.length = w;
      this.docsCache = undefined;
    }
  }

  private insert(made: SessionEntry[]): void {
    made.sort((a, b) => compareIds(a.doc.id as string, b.doc.id as string));
    for (const e of made) this.track(e);
    if (this.onOpen) for (const e of made) this.onOpen(e.doc);
    const last = this.entries[this.entries.length - 1];
    const first = made[0];
    if (last === undefined || first === undefined || compareIds(last.doc.id as string, first.doc.id as string) < 0) {
      this.entries.push(...made);
    } else {
      this.entries = [...this.entries, ...made].sort((a, b) => compareIds(a.doc.id as string, b.doc.id as string));
    }
    this.docsCache = undefined;
  }

  private track(e: SessionEntry): void {
    this.byId.set(e.doc.id as string, e);
    this.openCount++;
    const name = e.doc.name as string;
    const proto = e.doc.proto as string;
    this.perStream.set(name, (this.perStream.get(name) ?? 0) + 1);
    let protos = this.perStreamProto.get(name);
    if (!protos) this.perStreamProto.set(name, (protos = new Map()));
    protos.set(proto, (protos.get(proto) ?? 0) + 1);
  }

  private untrack(e: SessionEntry): void {
    this.openCount--;
    const name = e.doc.name as string;
    const proto = e.doc.proto as string;
    const n = (this.perStream.get(name) ?? 1) - 1;
    if (n > 0) this.perStream.set(name, n);
    else this.perStream.delete(name);
    const protos = this.perStreamProto.get(name);
    if (protos) {
      const m = (protos.get(proto) ?? 1) - 1;
      if (m > 0) protos.set(proto, m);
      else protos.delete(proto);
      if (protos.size === 0) this.perStreamProto.delete(name);
    }
  }

  private makeEntry(stream: SessionStream, init: SessionInit, openedAt: number, now: number): SessionEntry {
    const rng = this.rng;
    const proto = init.proto ?? PROTOS[rng.weighted(PROTO_WEIGHTS)]!;
    const segmented = proto === 'hls' || proto === 'dash' || proto === 'llhls';
    const secure = init.secure ?? rng.chance(0.7);
    const dvr = init.dvr ?? (segmented && rng.chance(0.1));
    const kbps = Math.max(64, stream.kbps);
    const rate = init.bytesPerSecond !== undefined ? init.bytesPerSecond / 1000 : (kbps * 125 * rng.float(0.9, 1.1)) / 1000;
    const id = init.id ?? timeOrderedUuid(rng, openedAt, this.counter++);
    const segmentsContainer = segmented || init.segments_container !== undefined ? (init.segments_container ?? (proto === 'hls' ? rng.pick(['mpegts', 'fmp4']) : proto === 'dash' ? rng.pick(['cmaf', 'fmp4']) : 'cmaf')) : undefined;
    const manifestType = init.manifest_type ?? (segmented ? (dvr ? rng.pick(['archive', 'timeshiftRel', 'rewind']) : 'index') : undefined);
    // Every session object has the same keys in the same order (absent ones hold undefined, which
    // JSON leaves out): one hidden class, so stepping 100,000 of them stays fast.
    const doc = {
      id,
      type: 'play',
      ip: init.ip ?? `${rng.pick([198, 203, 100, 81, 94])}.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`,
      proto,
      opened_at: openedAt,
      started_at: openedAt + rng.int(50, 1500),
      updated_at: now,
      closed_at: undefined,
      name: stream.name,
      user_name: stream.name,
      named_by: 'config',
      token: init.token ?? rng.hex(24),
      user_id: init.user_id ?? String(rng.int(1000, 99999)),
      country: init.country ?? COUNTRIES[rng.weighted(COUNTRY_WEIGHTS)]!,
      user_agent: init.user_agent ?? rng.pick(USER_AGENTS),
      referer: `https://portal.example.com/watch/${encodeURIComponent(stream.name)}`,
      query_string: `token=${rng.hex(12)}`,
      bytes: init.bytes ?? Math.round(rate * Math.max(0, now - openedAt)),
      secure,
      security_protocol: secure ? 'tlsv1.2' : undefined,
      segments_container: segmentsContainer,
      manifest_type: manifestType,
      dvr,
      allowed_dvr_from: dvr ? Math.floor(now / 1000) - 7 * 86400 : undefined,
      allowed_dvr_to: dvr ? Math.floor(now / 1000) : undefined,
      current_time: dvr ? openedAt - rng.int(60_000, 3 * 3600_000) : undefined,
      max_sessions: rng.chance(0.3) ? rng.pick([1, 2, 3, 5]) : undefined,
      soft_limitation: false,
      media_info: { flow_type: dvr ? 'dvr_stream' : 'stream', tracks: stream.tracks as JsonRecord[] },
      ts_delay: rng.int(10, 400),
      ts_delay_per_tracks: stream.tracks.map(() => rng.int(10, 400)),
    } as unknown as JsonRecord;
    return { doc, rate, open: true, removeAt: 0 };
  }
}

const EMPTY: ReadonlyMap<string, number> = new Map();

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
