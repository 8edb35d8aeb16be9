/**
 * The exporter's object graph for one process: self-metrics, the exposition cache, the worker
 * pool that polls one target per configured server and Catena service, and the fastify app that
 * serves them. main.ts builds it, listens with `app`, calls start(), and wires SIGHUP to reload() +
 * configReloaded() and SIGTERM/SIGINT to stop().
 *
 * Threads: the main thread serves HTTP and holds the exposition and self-metrics; polls run in
 * worker threads (`workers` in the config; src/threads/). The set of targets is decided here:
 * the fleet layer (src/fleet/) merges the static config with discovery and keeps this replica's
 * shard, and the owned targets are handed to the pool's apply(), the one seam where they enter.
 * The serving thread does not load the poll runtime or the HTTP client: the workers run the
 * built-in collectors (src/threads/worker.ts). With `workers: 0` the command loads the runtime
 * and hands it in (ExporterDeps.inProcessChannels): the polls run on the serving thread, over the
 * same messages a worker thread gets.
 */
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { ExporterConfig } from './config/types.js';
import { DEFAULT_MAX_CONNECTIONS } from './config/bounds.js';
import { Fleet } from './fleet/fleet.js';
import { SINGLE_SHARD, type ShardSpec } from './fleet/shard.js';
import { buildApp, type AppDeps } from './serve/app.js';
import { ExpositionCache } from './serve/exposition.js';
import { CONNECTION_DROP_REASONS, type ConnectionDropReason } from './serve/limits.js';
import { SelfMetrics } from './serve/self.js';
import { targetDescriptions } from './threads/target-descriptions.js';
import { USER_AGENT_PRODUCT } from './version.js';
import { threadChannels, type ChannelFactory } from './threads/channels.js';
import type { InProcessDeps } from './threads/in-process.js';
import { entryScript } from './thread-entries.js';
import { WorkerPool } from './threads/pool.js';
import { EventsReceiver } from './events/receiver.js';
import { registerSinks } from './events/register.js';

export interface ExporterDeps {
  readonly config: ExporterConfig;
  readonly logger: Logger;
  readonly version: string;
  /** This replica's shard (default: the only one, owning every target). */
  readonly shard?: ShardSpec;
  /** Web config, basic auth and the scrape cap of the HTTP face (src/serve/guards.ts). */
  readonly guards?: AppDeps['guards'];
  /** HOST:PORT at which Prometheus reaches this replica, for /sd (--web.external-address). */
  readonly externalAddress?: string;
  /** Demo mode (simulated data): flussonic_exporter_demo 1 and a banner on the landing page. */
  readonly demo?: boolean;
  /** --web.health-without-auth: the health endpoints answer without basic auth. */
  readonly healthWithoutAuth?: boolean;
  /** POST /-/reload (--web.enable-lifecycle); absent: 403. */
  readonly lifecycle?: AppDeps['lifecycle'];
  /** The poll runtime on this thread (src/threads/in-process.ts), required with `workers: 0`. */
  readonly inProcessChannels?: (deps: InProcessDeps) => ChannelFactory;
}

export interface Exporter {
  /** Built by buildApp(); never listens by itself. */
  readonly app: FastifyInstance;
  /** Starts the poll loops. */
  start(): void;
  /** Applies a new validated config: targets added, removed or changed; the others keep running. */
  reload(config: ExporterConfig): void;
  /** Sets flussonic_exporter_config_last_reload_success (and its timestamp when ok). */
  configReloaded(ok: boolean): void;
  /** Sets flussonic_exporter_web_config_last_reload_success (and its timestamp when ok). */
  webConfigReloaded(ok: boolean): void;
  /** Counts a connection the listeners' limits closed (flussonic_exporter_http_connections_dropped_total). */
  connectionDropped(reason: ConnectionDropReason): void;
  /** Refreshes every discovery source now and applies what changed (tests). */
  refreshDiscovery(): Promise<void>;
  /** Runs one poll of every target (or of the one with this name) now and awaits it. */
  pollOnce(target?: string): Promise<void>;
  /** Stops polling, aborts in-flight requests, closes the connection pools and threads; within 5 s. */
  stop(): Promise<void>;
}

const CONNECTIONS_DROPPED = 'flussonic_exporter_http_connections_dropped_total';

function servingThreadChannels(deps: ExporterDeps, runtime: InProcessDeps): ChannelFactory {
  if (!deps.inProcessChannels) throw new Error('workers: 0 polls on the serving thread, which needs the poll runtime (ExporterDeps.inProcessChannels)');
  return deps.inProcessChannels(runtime);
}

/** How long stop() lets aborted polls and pools wind down before the threads are ended. */
const STOP_GRACE_MS = 4000;

export function createExporter(deps: ExporterDeps): Exporter {
  const { logger, version } = deps;
  let config = deps.config;
  const self = new SelfMetrics({ version, demo: deps.demo ?? false });
  self.configReloaded(true, Date.now() / 1000);
  // The web config was loaded before the exporter was made: a bad one stops the start.
  self.webConfigReloaded(true, Date.now() / 1000);
  for (const reason of CONNECTION_DROP_REASONS) self.incCounter(CONNECTIONS_DROPPED, { reason }, 0);
  // Replaced expositions go back to a worker once unused (the pool is made below).
  let freeBuffers: (buffers: ArrayBuffer[]) => void = () => undefined;
  const cache = new ExpositionCache({ free: (buffers) => freeBuffers(buffers) });
  const userAgent = `${USER_AGENT_PRODUCT}/${version}`;
  // max_connections is split evenly over the workers: each has its own socket budget.
  const runtimes = Math.max(1, config.workers);
  const maxConnections = Math.max(1, Math.floor((config.maxConnections ?? DEFAULT_MAX_CONNECTIONS) / runtimes));
  const channels = config.workers > 0 ? threadChannels(entryScript('poller'), { logLevel: config.logLevel, userAgent, maxConnections }) : servingThreadChannels(deps, { log: logger, userAgent, maxConnections });
  // The event sink receiver (events.enabled): fed by the events route, joined with the polls' streams.
  const events = config.events ? new EventsReceiver(config.events, logger.child({ component: 'events' })) : undefined;
  const destination = (logger as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym]!;
  const pool = new WorkerPool({
    size: runtimes,
    channels,
    cache,
    self,
    log: logger,
    writeLog: (line) => destination.write(line),
    ...(events ? { streamsExported: (server: string, streams: readonly string[]) => events.streamsExported(server, streams) } : {}),
  });
  freeBuffers = (buffers) => pool.free(buffers);
  // workers: 0 is meant for one small server: polling more on the serving thread is said once.
  let severalSaid = config.workers > 0;
  const apply = (owned: ExporterConfig): void => {
    const targets = targetDescriptions(owned);
    if (targets.length > 1 && !severalSaid) {
      severalSaid = true;
      logger.warn(
        { targets: targets.length },
        'workers: 0 polls every target on the serving thread, where a scrape waits while a poll parses a page; it is meant for one small server: set workers to 1 or more for several',
      );
    }
    pool.apply(targets);
  };
  // Discovery and sharding decide which targets this replica polls; the pool gets only those.
  const fleet = new Fleet(
    {
      shard: deps.shard ?? SINGLE_SHARD,
      log: logger,
      self,
      apply,
      userAgent,
      ...(events ? { known: (servers: Parameters<EventsReceiver['setServers']>[0]) => events.setServers(servers) } : {}),
    },
    config,
  );

  const app = buildApp({
    logger,
    version,
    metricsPath: config.metricsPath,
    demo: deps.demo ?? false,
    exposition: cache,
    self,
    statuses: () => pool.statuses(),
    ready: () => pool.ready(),
    fleet,
    ...(events ? { events } : {}),
    ...(deps.externalAddress !== undefined ? { externalAddress: deps.externalAddress } : {}),
    ...(deps.guards ? { guards: deps.guards } : {}),
    ...(deps.healthWithoutAuth ? { healthWithoutAuth: true } : {}),
    ...(deps.lifecycle ? { lifecycle: deps.lifecycle } : {}),
  });

  let stopping: Promise<void> | undefined;
  return {
    app,
    start() {
      pool.start();
      fleet.start();
      if (config.events?.register) void registerSinks(config.events, config.servers, logger.child({ component: 'events' }));
    },
    reload(next) {
      if (next.metricsPath !== config.metricsPath) logger.warn({ metricsPath: next.metricsPath }, 'a new metrics_path takes effect after a restart');
      if (next.listenAddress.host !== config.listenAddress.host || next.listenAddress.port !== config.listenAddress.port) {
        logger.warn('a new listen_address takes effect after a restart');
      }
      if ((next.events === undefined) !== (config.events === undefined)) logger.warn('turning events.enabled on or off takes effect after a restart');
      if (next.workers !== config.workers) logger.warn({ workers: next.workers }, 'a new workers setting takes effect after a restart');
      logger.level = next.logLevel;
      pool.setLogLevel(next.logLevel);
      config = next;
      fleet.configure(next);
    },
    configReloaded(ok) {
      self.configReloaded(ok, Date.now() / 1000);
    },
    webConfigReloaded(ok) {
      self.webConfigReloaded(ok, Date.now() / 1000);
    },
    connectionDropped(reason) {
      self.incCounter(CONNECTIONS_DROPPED, { reason }, 1);
    },
    refreshDiscovery() {
      return fleet.refreshNow();
    },
    pollOnce(target) {
      return pool.pollOnce(target);
    },
    stop() {
      fleet.stop();
      stopping ??= pool.stop(STOP_GRACE_MS).then((inTime) => {
        if (!inTime) logger.warn('polls did not wind down within the stop grace time');
      });
      return stopping;
    },
  };
}
