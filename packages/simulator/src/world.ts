/**
 * The simulated world: streams, sessions, server and GPU state, DVR storages and the operations
 * log, moved forward by `advanceTo(now)`. Tests reach it as `sim.world` to read the truth and to
 * script situations (a stream down, a failover, a session opened, an operation logged).
 */
import { SimCluster } from './cluster.js';
import { CatenaActivity, OperationsLog, type OperationInput, type OperationRecord, type OperationsPage } from './catena.js';
import { ApiError, type ApiErrorObject } from './errors.js';
import { playFields, type EventEmitter } from './events.js';
import { mergePatch } from './merge-patch.js';
import { defaultSort, itemComparator, type CollectionSpec, type Json, type JsonRecord } from './query.js';
import type { Rng } from './rng.js';
import { streamConfigSchema, validateBody } from './schema.js';
import { DVR_ERROR_KEYS, ServerState, type DvrErrorKey, type TranscoderDevice } from './server.js';
import { SessionsStore, type SessionInit, type SessionStream } from './sessions.js';
import { generateStream, SimStream, type StatsShape, type StreamDeps, type StreamStatus } from './streams.js';
import { WorldEvents } from './world-events.js';

export const STREAMS_SPEC: CollectionSpec = {
  name: 'streams',
  implicitSort: ['named_by', 'position', 'name'],
  // Flussonic's documented default order is named_by (config, user, remote), then position, name.
  rank: { named_by: ['config', 'user', 'remote', 'external'] },
  defaultLimit: 100,
};
export const SESSIONS_SPEC: CollectionSpec = { name: 'sessions', implicitSort: ['id'], defaultLimit: 100 };
export const DVRS_SPEC: CollectionSpec = { name: 'dvrs', implicitSort: ['name'], defaultLimit: 100 };
export const PEERS_SPEC: CollectionSpec = { name: 'peers', implicitSort: ['hostname'], defaultLimit: 100 };

export interface WorldOptions {
  readonly streams: number;
  readonly sessions: number;
  readonly gpus: number;
  readonly dvrs: number;
  readonly shape: StatsShape;
  readonly churn: boolean;
  readonly catenaPortals: readonly string[];
  readonly catenaHistory: boolean;
  readonly dvrStats: boolean;
  readonly sessionLingerMs: number;
}

export interface StreamsApi {
  /** API objects in the collection's default order. */
  list(): JsonRecord[];
  names(): string[];
  get(name: string): JsonRecord | undefined;
  readonly size: number;
  /** PUT semantics (merge patch, validation); throws ApiError (400) on a bad body. */
  put(name: string, body: unknown): { created: boolean; stream: JsonRecord };
  delete(name: string): boolean;
  /** Take a stream down (status `error`, or the given one) or bring it back; pinned until set alive again. */
  setAlive(name: string, alive: boolean, status?: StreamStatus): void;
  /** Fail over to the backup (second) input, or back to the primary. */
  setFailover(name: string, active: boolean): void;
  /**
   * The active input of a stream counts `count` (default 1) more input errors of one kind now:
   * `error` is a kind of that input's protocol without the prefix (`lost_packets` for
   * `errors_lost_packets`); others throw. The 2025 shape serves them.
   */
  addInputErrors(name: string, error: string, count?: number): void;
  setBitrate(name: string, kbps: number): void;
  /** The source drops now (source_closed) and comes back `ms` later (source_opened, source_started). */
  dropSource(name: string, ms: number): void;
  /** Push `index` of a stream is blocked now (push_blocked) and restored `ms` later (push_restored). */
  blockPush(name: string, index: number, ms: number): void;
}

export interface SessionsApi {
  /** Open sessions in id order. */
  list(): JsonRecord[];
  /** What GET /sessions serves (open, plus closed ones while they linger). */
  served(): readonly JsonRecord[];
  get(id: string): JsonRecord | undefined;
  readonly size: number;
  /** Open a session on a stream (default: a popular live stream). */
  open(init?: SessionInit): JsonRecord;
  close(id: string): boolean;
  countOf(stream: string): number;
  /** Target number of open sessions churn keeps around. */
  target: number;
}

export interface ServerApi {
  stats(): JsonRecord;
  devices(): readonly TranscoderDevice[];
  /** Override top-level /config/stats fields (e.g. `{ streamer_status: 'starting' }`); `{}` clears. */
  set(overrides: JsonRecord): void;
  /** Pin GPU readings of one device (they stop following load until cleared with `null`). */
  setDevice(id: number, values: Partial<Pick<TranscoderDevice, 'gpu_temp' | 'gpu_enc' | 'gpu_dec' | 'gpu_sm' | 'memUsed'>> | null): void;
  /** A transcoder device lacked resources (transcoder_device_insufficient_resources). */
  deviceShortage(id: number, reason?: 'auto_resource_allocation' | 'manual_resource_allocation'): void;
}

export interface DvrsApi {
  list(): JsonRecord[];
  addError(name: string, error: DvrErrorKey, count?: number): void;
}

export interface CatenaApi {
  /** Append an operation (explicit createdAt allowed, also equal ones) and return the record. */
  add(input: OperationInput): OperationRecord;
  list(portalId: string): OperationRecord[];
  portals(): string[];
  /** Packages the generator created for a portal (ids for price configuration). */
  packages(portalId: string): { packageId: string; packageName: string }[];
  clear(portalId?: string): void;
  /** API key -> portal. */
  readonly keys: Map<string, string>;
}

export class SimWorld {
  readonly streams: StreamsApi;
  readonly sessions: SessionsApi;
  readonly server: ServerApi;
  readonly dvrs: DvrsApi;
  readonly catena: CatenaApi;
  readonly shape: StatsShape;
  /** GET /cluster/peers (cluster.ts). */
  readonly cluster = new SimCluster();
  /** The events of the server's life, for the event sinks (world-events.ts). */
  readonly events: EventEmitter;
  private readonly worldEvents: WorldEvents;
  churn: boolean;

  private readonly rng: Rng;
  private readonly streamList: SimStream[] = [];
  private readonly byName = new Map<string, SimStream>();
  private readonly popularity = new Map<string, number>();
  private cumulative: { stream: SimStream; upTo: number }[] | undefined;
  private readonly sessionStore: SessionsStore;
  private readonly serverState: ServerState;
  private readonly log = new OperationsLog();
  private readonly activity: CatenaActivity;
  private readonly deviceOverrides = new Map<number, Partial<TranscoderDevice>>();
  private readonly deps: StreamDeps;
  private readonly sortStreams: (a: unknown, b: unknown) => number;
  private lastStep: number;
  private nextPosition = 0;
  private mutations = 0;

  constructor(
    private readonly options: WorldOptions,
    rng: Rng,
    now: number,
  ) {
    this.rng = rng;
    this.shape = options.shape;
    this.churn = options.churn;
    this.lastStep = now;
    const byDoc = itemComparator(defaultSort(STREAMS_SPEC), STREAMS_SPEC);
    // The list is kept in the collection's default order, by the same comparator the query uses.
    const keyOf = (s: SimStream) => ({ named_by: s.namedBy, position: s.position, name: s.name });
    this.sortStreams = (a, b) => byDoc(keyOf(a as SimStream), keyOf(b as SimStream));
    const version = options.shape === 'flat' ? '24.12' : '25.11';
    this.serverState = new ServerState(rng.fork('server'), now, options.gpus, options.dvrs, version, options.shape === 'flat' ? 1432 : 2087);
    this.sessionStore = new SessionsStore(rng.fork('sessions'), options.sessions, options.sessionLingerMs);
    this.worldEvents = new WorldEvents(this.serverState.id, (name) => this.sessionStore.clientsOf(name));
    const events = (this.events = this.worldEvents.emitter);
    this.sessionStore.onOpen = (doc) => events.active && events.emit('play_opened', this.lastStep, playFields(doc));
    this.sessionStore.onClose = (doc) => events.active && events.emit('play_closed', this.lastStep, playFields(doc));
    this.deps = {
      shape: options.shape,
      hostname: this.serverState.hostname,
      clientsOf: (name) => this.sessionStore.clientsOf(name),
      clientsByProto: (name) => this.sessionStore.clientsByProto(name),
      deviceLoad: (id) => this.serverState.deviceLoad(id),
    };

    const streamRng = rng.fork('streams');
    const dvrNames = this.serverState.dvrs.map((d) => d.name);
    for (let i = 0; i < options.streams; i++) {
      const g = generateStream(i, streamRng, { gpus: options.gpus, dvrNames });
      if (this.byName.has(g.name)) continue;
      const position = g.namedBy === 'remote' ? null : this.nextPosition++;
      const stream = new SimStream(g.name, g.config, g.namedBy, position, streamRng, now, g.bitrateKbps);
      this.addStream(stream);
    }
    this.sessionStore.populate(now, (r) => this.pickStream(r));
    this.streamList.sort(this.sortStreams);
    this.updateServer(0, now);

    this.activity = new CatenaActivity(this.log, rng.fork('catena'), options.catenaPortals);
    if (options.catenaHistory) this.activity.history(now - 3 * 86400_000, now);

    this.streams = this.makeStreamsApi();
    this.sessions = this.makeSessionsApi();
    this.server = this.makeServerApi();
    this.dvrs = this.makeDvrsApi();
    const log = this.log;
    const activity = this.activity;
    const keys = new Map<string, string>();
    const world = this;
    this.catena = {
      add: (input) => log.add(input, world.lastStep),
      list: (portal) => log.list(portal),
      portals: () => log.portals(),
      packages: (portal) => activity.packages(portal),
      clear: (portal) => log.clear(portal),
      keys,
    };
  }

  get now(): number {
    return this.lastStep;
  }

  /** Move the world to `now`: counters grow, and with churn things happen. */
  advanceTo(now: number): void {
    const dt = now - this.lastStep;
    if (dt <= 0) return;
    const from = this.lastStep;
    this.lastStep = now;
    this.mutations++;
    const stopped = new Set<string>();
    for (const s of this.streamList) if (!s.alive && !s.backupRunning) stopped.add(s.name);
    this.sessionStore.step(dt, now, this.churn, stopped, (r) => this.pickStream(r));
    const events = this.worldEvents.active;
    for (const s of this.streamList) {
      const was = s.alive;
      s.step(dt, now, this.rng, this.churn, this.deps);
      if (events && s.alive !== was) this.worldEvents.sourceChanged(s, now);
    }
    this.worldEvents.runDue(now);
    this.updateServer(dt, now);
    if (this.churn) this.activity.run(from, now);
  }

  /** Items for GET /streams, in default order (the query engine relies on it). */
  streamDocs(): JsonRecord[] {
    return this.streamList.map((s) => s.docAt(this.lastStep, this.deps));
  }

  /** The default sort keys of every stream, in order: enough for a walk in the default order. */
  streamKeys(): { named_by: string; position: number | null; name: string }[] {
    return this.streamList.map((s) => ({ named_by: s.namedBy, position: s.position, name: s.name }));
  }

  /** Changes whenever anything a collection read could see changed (time or a mutation). */
  get version(): number {
    return this.mutations;
  }

  sessionDocs(): readonly JsonRecord[] {
    return this.sessionStore.served();
  }

  serverStats(): JsonRecord {
    const stats = this.serverState.stats(this.lastStep);
    const devices = stats.transcoder_devices;
    if (Array.isArray(devices) && this.deviceOverrides.size > 0) {
      stats.transcoder_devices = devices.map((d) => {
        const o = this.deviceOverrides.get((d as JsonRecord).id as number) as JsonRecord | undefined;
        if (!o) return d;
        const merged = { ...(d as JsonRecord), ...o };
        if (typeof merged.memTotal === 'number' && typeof merged.memUsed === 'number') merged.memFree = merged.memTotal - merged.memUsed;
        return merged;
      });
    }
    return stats;
  }

  dvrDocs(): JsonRecord[] {
    const withStats = this.options.dvrStats;
    return this.serverState.dvrs.map((d) => this.serverState.dvrDoc(d, withStats));
  }

  /** GET /tv-management/api/v1/operations for one portal (parameters validated there). */
  catenaQuery(portalId: string, params: URLSearchParams): OperationsPage {
    return this.log.query(portalId, params);
  }

  /** A generated name for POST /streams. */
  generatedName(): string {
    for (;;) {
      const name = `stream-${this.rng.hex(8)}`;
      if (!this.byName.has(name)) return name;
    }
  }

  hasStream(name: string): boolean {
    return this.byName.has(name);
  }

  /**
   * The simulated server restarts: uptime and the event counters of /config/stats start over,
   * `event_id` starts over at 1 with `server_started`. Streams and sessions stay as they are.
   */
  restartServer(): void {
    this.serverState.startedAt = this.lastStep;
    this.serverState.events = { resent_events: 0, dropped_events: 0 };
    this.worldEvents.serverStarted(this.lastStep, this.serverState.version, this.rng.uuid(), true);
    this.mutations++;
  }

  /** `server_started`: the first event of a run. */
  serverStarted(): void {
    this.worldEvents.serverStarted(this.lastStep, this.serverState.version, this.rng.uuid(), false);
  }

  /** Event sinks count what they resent and dropped in /config/stats `events`, as Flussonic does. */
  countEvents(kind: 'resent_events' | 'dropped_events', n: number): void {
    this.serverState.events[kind] += n;
  }

  // ---- internals ---------------------------------------------------------------------------

  /** A stream's sessions changed outside a step: its document and every cached query are stale. */
  private touched(name: string): void {
    const s = this.byName.get(name);
    if (s) s.dirty = true;
    this.mutations++;
  }

  private addStream(stream: SimStream): void {
    this.streamList.push(stream);
    this.byName.set(stream.name, stream);
    this.popularity.set(stream.name, Math.pow(this.rng.next(), 3) + 0.001);
    this.cumulative = undefined;
  }

  private sessionStream(s: SimStream | undefined): SessionStream | undefined {
    if (!s) return undefined;
    return { name: s.name, kbps: s.nominalKbps, alive: s.alive || s.backupRunning, tracks: s.tracks };
  }

  /** A stream for a new session, weighted by popularity; live streams preferred. */
  private pickStream(rng: Rng): SessionStream | undefined {
    if (this.streamList.length === 0) return undefined;
    if (!this.cumulative) {
      let total = 0;
      this.cumulative = this.streamList.map((stream) => ({ stream, upTo: (total += this.popularity.get(stream.name) ?? 0.001) }));
    }
    const cum = this.cumulative;
    const total = cum[cum.length - 1]!.upTo;
    let chosen: SimStream | undefined;
    for (let attempt = 0; attempt < 4; attempt++) {
      const r = rng.next() * total;
      let lo = 0;
      let hi = cum.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (cum[mid]!.upTo > r) hi = mid;
        else lo = mid + 1;
      }
      chosen = cum[lo]!.stream;
      if (chosen.alive) break;
    }
    return this.sessionStream(chosen);
  }

  private updateServer(dt: number, now: number): void {
    let online = 0;
    let inputKbit = 0;
    let outputKbit = 0;
    let transcoded = 0;
    let dvrStreams = 0;
    const perDevice = new Map<number, number>();
    const dvrRate = new Map<string, number>();
    for (const s of this.streamList) {
      if (!s.alive) continue;
      online++;
      inputKbit += s.currentKbps;
      outputKbit += this.sessionStore.clientsOf(s.name) * s.currentKbps;
      if (s.transcoder) {
        transcoded++;
        if (s.transcoder.deviceId !== undefined) perDevice.set(s.transcoder.deviceId, (perDevice.get(s.transcoder.deviceId) ?? 0) + 1);
      }
      if (s.hasDvr) {
        dvrStreams++;
        const ref = (s.config.dvr as JsonRecord).reference;
        if (typeof ref === 'string') dvrRate.set(ref, (dvrRate.get(ref) ?? 0) + s.currentKbps * 125);
      }
    }
    for (const d of this.serverState.dvrs) d.writeRate = dvrRate.get(d.name) ?? 0;
    this.serverState.step(dt, now, this.churn, { clients: this.sessionStore.size, streams: this.streamList.length, online, inputKbit, outputKbit, transcoded, dvrSessions: dvrStreams }, perDevice);
  }

  private requireStream(name: string): SimStream {
    const s = this.byName.get(name);
    if (!s) throw new Error(`no stream named ${JSON.stringify(name)}`);
    return s;
  }

  private putStream(name: string, body: unknown): { created: boolean; stream: JsonRecord } {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      // Rule 4 of 4.4: a non-object replaces the whole object, and a stream must be an object.
      throw new ApiError(400, [{ code: 'invalid_value', title: 'the body must be a JSON object (a stream)', source: { pointer: '' } }]);
    }
    const { value, problems } = validateBody(body, streamConfigSchema);
    if (problems.length > 0) throw new ApiError(400, problems);
    const existing = this.byName.get(name);
    const merged = mergePatch(existing?.config ?? {}, value as Json) as JsonRecord;
    const recheck = validateBody(merged, streamConfigSchema);
    if (recheck.problems.length > 0) throw new ApiError(400, recheck.problems as ApiErrorObject[]);
    const config = recheck.value as JsonRecord;
    const now = this.lastStep;
    const position = typeof config.position === 'number' ? config.position : undefined;
    delete config.position;
    let stream: SimStream;
    if (existing) {
      stream = existing;
      if (position !== undefined) stream.position = position;
      stream.applyConfig(config, this.rng, now);
    } else {
      stream = new SimStream(name, config, 'config', position ?? this.nextPosition++, this.rng, now, 2500);
      stream.openedNow(now);
      this.addStream(stream);
      this.worldEvents.streamOpened(stream, now);
    }
    this.streamList.sort(this.sortStreams);
    this.mutations++;
    return { created: !existing, stream: stream.docAt(now, this.deps) };
  }

  private makeStreamsApi(): StreamsApi {
    const world = this;
    return {
      list: () => this.streamDocs(),
      names: () => this.streamList.map((s) => s.name),
      get: (name) => this.byName.get(name)?.docAt(this.lastStep, this.deps),
      get size() {
        return world.streamList.length;
      },
      put: (name, body) => this.putStream(name, body),
      delete: (name) => {
        const s = this.byName.get(name);
        if (!s) return false;
        this.byName.delete(name);
        this.streamList.splice(this.streamList.indexOf(s), 1);
        this.cumulative = undefined;
        this.sessionStore.closeStream(name, this.lastStep);
        this.mutations++;
        this.worldEvents.streamClosed(s, this.lastStep);
        return true;
      },
      setAlive: (name, alive, status) => {
        const s = this.requireStream(name);
        const was = s.alive;
        if (alive) {
          s.pinned = false;
          if (!s.alive) s.recover(this.lastStep);
        } else {
          s.pinned = true;
          s.goDown(this.lastStep, Number.POSITIVE_INFINITY, status ?? 'error');
        }
        if (s.alive !== was) this.worldEvents.sourceChanged(s, this.lastStep);
        this.mutations++;
      },
      dropSource: (name, ms) => {
        this.worldEvents.dropSource(this.requireStream(name), this.lastStep, ms);
        this.mutations++;
      },
      blockPush: (name, index, ms) => this.worldEvents.blockPush(this.requireStream(name), index, this.lastStep, ms),
      setFailover: (name, active) => {
        const s = this.requireStream(name);
        s.setFailover(active, this.lastStep);
        s.dirty = true;
        this.mutations++;
      },
      addInputErrors: (name, error, count = 1) => {
        this.requireStream(name).addInputErrors(error, count);
        this.mutations++;
      },
      setBitrate: (name, kbps) => {
        const s = this.requireStream(name);
        s.nominalKbps = kbps;
        s.currentKbps = kbps;
        s.dirty = true;
        this.mutations++;
      },
    };
  }

  private makeSessionsApi(): SessionsApi {
    const store = this.sessionStore;
    const world = this;
    return {
      list: () => store.list(),
      served: () => store.served(),
      get: (id) => store.get(id),
      get size() {
        return store.size;
      },
      open: (init = {}) => {
        const stream = init.name !== undefined ? world.sessionStream(world.requireStream(init.name)) : world.pickStream(world.rng);
        if (!stream) throw new Error('no stream to open a session on');
        const doc = store.open(stream, init, world.lastStep);
        world.touched(stream.name);
        return doc;
      },
      close: (id) => {
        const doc = store.get(id);
        const closed = store.close(id, world.lastStep);
        if (doc) world.touched(doc.name as string);
        return closed;
      },
      countOf: (stream) => store.clientsOf(stream),
      get target() {
        return store.target;
      },
      set target(n: number) {
        store.target = n;
      },
    };
  }

  private makeServerApi(): ServerApi {
    return {
      stats: () => this.serverStats(),
      devices: () => this.serverState.devices,
      set: (overrides) => {
        this.serverState.overrides = { ...overrides };
      },
      setDevice: (id, values) => {
        if (!this.serverState.devices.some((d) => d.id === id)) throw new Error(`no transcoder device ${id}`);
        if (values === null) this.deviceOverrides.delete(id);
        else this.deviceOverrides.set(id, { ...values });
      },
      deviceShortage: (id, reason = 'auto_resource_allocation') => {
        if (!this.serverState.devices.some((d) => d.id === id)) throw new Error(`no transcoder device ${id}`);
        this.worldEvents.deviceShortage(id, this.lastStep, reason);
      },
    };
  }

  private makeDvrsApi(): DvrsApi {
    return {
      list: () => this.dvrDocs(),
      addError: (name, error, count = 1) => {
        const dvr = this.serverState.dvrs.find((d) => d.name === name);
        if (!dvr) throw new Error(`no DVR named ${JSON.stringify(name)}`);
        if (!DVR_ERROR_KEYS.includes(error)) throw new Error(`unknown DVR error ${error}`);
        dvr.errors[error] += count;
      },
    };
  }
}
