/**
 * The embedded Flussonic Media Server API v3 and Catena operations-log simulator: the partner of
 * every exporter test and benchmark, the engine of demo mode, and a standalone tool
 * (`flussonic-exporter simulate`). See docs/simulator.md.
 */
import { SimClock, DEFAULT_START_TIME, type ClockMode } from './clock.js';
import { ApiError } from './errors.js';
import { EventSinks } from './event-sinks.js';
import type { SinkFault, SinkState } from './event-delivery.js';
import type { JsonRecord } from './query.js';
import { FaultController } from './faults.js';
import { SimulatorHttp, type Credentials } from './http.js';
import { RequestLog } from './request-log.js';
import { Rng } from './rng.js';
import { PEERS_SHAPES, type PeersShape, type SimPeer } from './cluster.js';
import type { StatsShape } from './streams.js';
import { SimWorld } from './world.js';

export type { Fault, FaultEndpoint } from './faults.js';
export { FaultController, parseFaultSpec } from './faults.js';
export type { RequestRecord } from './request-log.js';
export { RequestLog } from './request-log.js';
export type { CatenaApi, DvrsApi, ServerApi, SessionsApi, StreamsApi } from './world.js';
export { SimWorld } from './world.js';
export type { OperationInput, OperationRecord, OperationType } from './catena.js';
export { OPERATION_TYPES } from './catena.js';
export type { SessionInit } from './sessions.js';
export type { StatsShape, StreamStatus } from './streams.js';
export type { TranscoderDevice, DvrErrorKey } from './server.js';
export { DVR_ERROR_KEYS } from './server.js';
export { DEFAULT_START_TIME } from './clock.js';
export type { PeersShape, SimPeer } from './cluster.js';
export { DEFAULT_CLUSTER_KEY, PEERS_SHAPES, SimCluster } from './cluster.js';
export { API_PREFIXES, OPERATIONS_PATH } from './http.js';
export { mergePatch } from './merge-patch.js';
export { streamConfigSchema } from './schema.js';
export type { SimEvent, SimEventKind } from './events.js';
export { SIM_EVENT_KINDS } from './events.js';
export type { SinkFault, SinkState } from './event-delivery.js';
export { DEFAULT_RESEND_LIMIT, MAX_BATCH } from './event-delivery.js';
export { eventSinkConfigSchema } from './event-sinks.js';

/** An event sink given at start: its name and its event_sink_config (url, only, throttle_delay, ...). */
export interface EventSinkOption {
  readonly name: string;
  readonly url: string;
  readonly [field: string]: unknown;
}

/** The event sinks of a running simulator (what GET/PUT/DELETE /event_sinks serve), for tests. */
export interface EventSinksApi {
  list(): JsonRecord[];
  get(name: string): JsonRecord | undefined;
  /** PUT semantics (merge patch, validation); throws ApiError (400) on a bad configuration. */
  put(name: string, config: Record<string, unknown>): JsonRecord;
  delete(name: string): boolean;
  /** Delivery counts and queue of one sink. */
  state(name: string): SinkState;
  /** A delivery fault, e.g. `{ replayConfirmed: 1 }`: the next confirmed batch is sent once more. */
  fault(name: string, fault: SinkFault | null): void;
  /** Resolves when no POST is on its way (with a manual clock: after advance(), wait for delivery). */
  settled(): Promise<void>;
}

export interface SimulatorOptions {
  /** Streams in the world (default 20). */
  streams?: number;
  /** Target number of open sessions (default 200). */
  sessions?: number;
  /** Transcoder devices (GPUs) in /config/stats (default 1; 0 = no `transcoder_devices`). */
  gpus?: number;
  /** DVR storages in /dvrs (default 1). */
  dvrs?: number;
  /** Stream stats shape: flat (23.x/24.x) or nested (2025); default 'flat'. */
  shape?: StatsShape;
  /** Everything deterministic from it (default 1). */
  seed?: number;
  viewAuth?: Credentials;
  editAuth?: Credentials;
  /** API keys of the operations log, one portal each. */
  catenaKeys?: { key: string; portal: string }[];
  /** Generate three days of past operations (default true). */
  catenaHistory?: boolean;
  /** 'manual': time moves only by advance() (default 'real'). */
  clock?: ClockMode;
  /** Unix ms where time starts (default 2026-01-01T00:00:00Z for a manual clock, now for a real one). */
  startTime?: number;
  /** Sessions open/close, streams go down/up, GPUs wander, subscribers come and go (default true). */
  churn?: boolean;
  /** DVR-level `stats` (size, used, errors) in /dvrs (default: only with the nested shape, as 2025 servers). */
  dvrStats?: boolean;
  /** How long a closed session stays in /sessions with `closed_at` set (default 0: it vanishes). */
  sessionLingerMs?: number;
  host?: string;
  port?: number;
  /** Peers listed by GET /cluster/peers (default none); change them later with `world.cluster.set()`. */
  peers?: SimPeer[];
  /** Shape of /cluster/peers: '2025' (default) or '23.05'. */
  peersShape?: PeersShape;
  /** `cluster_key` of every peer entry (default DEFAULT_CLUSTER_KEY). */
  clusterKey?: string;
  /** Event sinks configured at start; they get `server_started` (event_id 1) first. */
  eventSinks?: readonly EventSinkOption[];
}

export interface RunningSimulator {
  /** Base URL, e.g. http://127.0.0.1:43123 (no trailing slash). */
  readonly url: string;
  readonly world: SimWorld;
  readonly faults: FaultController;
  readonly requests: RequestLog;
  /** Current simulated Unix ms. */
  now(): number;
  /** Move time forward (any clock) and step the world; event sinks send what is due. */
  advance(ms: number): void;
  readonly sinks: EventSinksApi;
  /** The simulated server restarts: event_id starts over with server_started; buffered events are lost. */
  restart(): void;
  close(): Promise<void>;
}

function count(name: string, value: number | undefined, fallback: number, max: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`simulator option ${name} must be an integer from 0 to ${max}, got ${value}`);
  return v;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const shape = options.shape ?? 'flat';
  if (shape !== 'flat' && shape !== 'nested') throw new RangeError(`simulator option shape must be 'flat' or 'nested', got ${String(shape)}`);
  const clockMode = options.clock ?? 'real';
  if (clockMode !== 'real' && clockMode !== 'manual') throw new RangeError(`simulator option clock must be 'real' or 'manual', got ${String(clockMode)}`);
  const seed = options.seed ?? 1;
  if (!Number.isInteger(seed)) throw new RangeError(`simulator option seed must be an integer, got ${seed}`);
  const catenaKeys = options.catenaKeys ?? [];
  for (const k of catenaKeys) {
    if (!k.key || !k.portal) throw new RangeError('simulator option catenaKeys: each entry needs a non-empty key and portal');
  }
  for (const [name, auth] of [['viewAuth', options.viewAuth], ['editAuth', options.editAuth]] as const) {
    if (auth && (typeof auth.user !== 'string' || typeof auth.password !== 'string' || auth.user.includes(':'))) {
      throw new RangeError(`simulator option ${name} needs string user (without ':') and password`);
    }
  }

  const clock = new SimClock(clockMode, options.startTime ?? (clockMode === 'manual' ? DEFAULT_START_TIME : Date.now()));
  const rng = new Rng(seed);
  const world = new SimWorld(
    {
      streams: count('streams', options.streams, 20, 1_000_000),
      sessions: count('sessions', options.sessions, 200, 10_000_000),
      gpus: count('gpus', options.gpus, 1, 64),
      dvrs: count('dvrs', options.dvrs, 1, 1000),
      shape,
      churn: options.churn ?? true,
      catenaPortals: [...new Set(catenaKeys.map((k) => k.portal))],
      catenaHistory: options.catenaHistory ?? true,
      dvrStats: options.dvrStats ?? shape === 'nested',
      sessionLingerMs: count('sessionLingerMs', options.sessionLingerMs, 0, 86_400_000),
    },
    rng.fork('world'),
    clock.now(),
  );
  for (const k of catenaKeys) world.catena.keys.set(k.key, k.portal);
  if (options.peersShape !== undefined && !PEERS_SHAPES.includes(options.peersShape)) throw new RangeError(`simulator option peersShape must be one of ${PEERS_SHAPES.join(', ')}, got ${String(options.peersShape)}`);
  if (options.peersShape) world.cluster.shape = options.peersShape;
  if (options.clusterKey !== undefined) world.cluster.clusterKey = options.clusterKey;
  if (options.peers) world.cluster.set(options.peers);

  const sinks = new EventSinks({ emitter: world.events, now: () => clock.now(), count: (kind, n) => world.countEvents(kind, n) });
  for (const sink of options.eventSinks ?? []) {
    const { name, ...config } = sink;
    try {
      sinks.put(name, config);
    } catch (e) {
      const why = e instanceof ApiError ? e.body().errors.map((x) => x.title).join('; ') : String(e);
      throw new RangeError(`simulator option eventSinks: sink ${JSON.stringify(name)}: ${why}`);
    }
  }
  world.serverStarted();

  const faults = new FaultController();
  const requests = new RequestLog();
  // In real time the world catches up when asked, at most once a second: a step over 100,000
  // sessions costs tens of milliseconds, which must not happen on every page of a walk.
  const sync = () => {
    const now = clock.now();
    if (clockMode === 'real' && now - world.now >= 1000) world.advanceTo(now);
  };
  const http = new SimulatorHttp({
    world,
    sinks,
    faults,
    requests,
    ...(options.viewAuth ? { viewAuth: options.viewAuth } : {}),
    ...(options.editAuth ? { editAuth: options.editAuth } : {}),
    sync,
    now: () => clock.now(),
    rng: rng.fork('faults'),
  });
  const host = options.host ?? '127.0.0.1';
  let port: number;
  try {
    port = await http.listen(options.port ?? 0, host);
  } catch (e) {
    await sinks.close();
    throw e;
  }
  // A real clock moves the world and the sinks on its own while a sink can receive (4 times a second).
  const ticker = clockMode === 'real'
    ? setInterval(() => {
        if (!sinks.delivering) return;
        sync();
        sinks.pump();
      }, 250).unref()
    : undefined;
  sinks.pump();
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    world,
    faults,
    requests,
    now: () => clock.now(),
    advance(ms: number) {
      clock.advance(ms);
      world.advanceTo(clock.now());
      sinks.pump();
    },
    sinks: {
      list: () => sinks.list(),
      get: (name) => sinks.get(name),
      put: (name, config) => sinks.put(name, config),
      delete: (name) => sinks.delete(name),
      state: (name) => sinks.state(name),
      fault: (name, fault) => sinks.fault(name, fault),
      settled: () => sinks.settled(),
    },
    restart() {
      sinks.restart();
      world.restartServer();
      sinks.pump();
    },
    close() {
      if (ticker) clearInterval(ticker);
      closing ??= Promise.all([sinks.close(), http.close()]).then(() => undefined);
      return closing;
    },
  };
}
