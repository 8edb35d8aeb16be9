/**
 * The exporter's object graph for one process: self-metrics, the exposition cache, the poller with
 * one target per configured server and Catena service, and the fastify app that serves them.
 * main.ts builds it, listens with `app`, calls start(), and wires SIGHUP to reload() +
 * configReloaded() and SIGTERM/SIGINT to stop().
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { COLLECTORS } from './collectors/index.js';
import type { CollectorEntry } from './collectors/types.js';
import type { ExporterConfig } from './config/types.js';
import { buildApp } from './http/app.js';
import { ExpositionCache } from './metrics/exposition.js';
import { SelfMetrics } from './metrics/self.js';
import { Poller } from './poller.js';
import { builtInCatenaCollectors, targetSpecs, type CatenaCollectorFactory, type TargetDeps } from './targets.js';

export interface ExporterDeps {
  readonly config: ExporterConfig;
  readonly logger: Logger;
  readonly version: string;
  /** The collector table; default: the built-in one (src/collectors/index.ts). Tests pass their own. */
  readonly collectors?: readonly CollectorEntry[];
  /** The Catena operations collector; default: the built-in one. */
  readonly catenaCollector?: CatenaCollectorFactory;
  /** Pause before the one retry of a failed upstream GET (default 250 ms). */
  readonly retryBackoffMs?: number;
  /** Source of the poll loops' jitter (default Math.random). */
  readonly random?: () => number;
  /** Register prom-client's default process/nodejs metrics (default true). */
  readonly defaultMetrics?: boolean;
  /** Demo mode (simulated data): flussonic_exporter_demo 1 and a banner on the landing page. */
  readonly demo?: boolean;
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
  /** Runs one poll of every target (or of the one with this name) now and awaits it. */
  pollOnce(target?: string): Promise<void>;
  /** Stops polling, aborts in-flight requests, closes the connection pools; within 5 s. */
  stop(): Promise<void>;
}

/** How long stop() lets aborted polls and pools wind down before dropping connections. */
const STOP_GRACE_MS = 4000;

export function createExporter(deps: ExporterDeps): Exporter {
  const { logger, version } = deps;
  let config = deps.config;
  const self = new SelfMetrics({ version, defaultMetrics: deps.defaultMetrics, demo: deps.demo ?? false });
  self.configReloaded(true, Date.now() / 1000);
  const cache = new ExpositionCache();
  const poller = new Poller({ self, cache, log: logger, random: deps.random });
  const targetDeps: TargetDeps = {
    collectorTable: deps.collectors ?? COLLECTORS,
    catenaCollector: deps.catenaCollector ?? builtInCatenaCollectors(),
    self,
    log: logger,
    userAgent: `flussonic-exporter/${version}`,
    retryBackoffMs: deps.retryBackoffMs,
  };

  // Applying targets is asynchronous (removed ones are stopped first); applications queue up in
  // order, and pollOnce()/stop() wait for the queue so they always see the latest config.
  let applying: Promise<void> = Promise.resolve();
  const apply = (next: ExporterConfig) => {
    applying = applying
      .then(() => poller.apply(targetSpecs(next, targetDeps)))
      .catch((err: unknown) => logger.error({ err }, 'applying the configuration failed'));
  };
  apply(config);

  const app = buildApp({
    logger,
    version,
    metricsPath: config.metricsPath,
    demo: deps.demo ?? false,
    exposition: cache,
    self,
    statuses: () => poller.statuses(),
    ready: () => poller.ready(),
  });

  let stopping: Promise<void> | undefined;
  return {
    app,
    start() {
      void applying.then(() => poller.start());
    },
    reload(next) {
      if (next.metricsPath !== config.metricsPath) logger.warn({ metricsPath: next.metricsPath }, 'a new metrics_path takes effect after a restart');
      if (next.listenAddress.host !== config.listenAddress.host || next.listenAddress.port !== config.listenAddress.port) {
        logger.warn('a new listen_address takes effect after a restart');
      }
      logger.level = next.logLevel;
      config = next;
      apply(next);
    },
    configReloaded(ok) {
      self.configReloaded(ok, Date.now() / 1000);
    },
    async pollOnce(target) {
      await applying;
      await poller.pollOnce(target);
    },
    stop() {
      stopping ??= (async () => {
        await applying;
        let timer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), STOP_GRACE_MS);
        });
        const result = await Promise.race([poller.stop(), graceOver]);
        clearTimeout(timer);
        if (result === 'late') logger.warn('polls did not wind down within the stop grace time');
      })();
      return stopping;
    },
  };
}
