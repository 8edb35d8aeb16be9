/**
 * The serving side over a worker pool whose workers are not the shipped ones: the exposition
 * cache, the self-metrics, a WorkerPool (src/threads/pool.ts) on the channels a test gives and
 * the HTTP app (buildApp) answering from them, wired as src/exporter.ts wires them but without
 * discovery and sharding (the targets go straight to the pool's apply()). For tests of the pool,
 * the poll runtime and the HTTP face with collectors scripted by the test (a runtime on this thread:
 * scriptedChannels()) or with a worker thread entry that has switchable faults. Tests of the
 * exporter as users get it build it with createExporter().
 */
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { CollectorEntry } from '../../src/collect/types.js';
import type { ExporterConfig } from '../../src/config/types.js';
import type { CatenaCollectorFactory } from '../../src/poll/targets.js';
import { buildApp } from '../../src/serve/app.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { SelfMetrics } from '../../src/serve/self.js';
import type { ChannelFactory } from '../../src/threads/channels.js';
import { inProcessChannels } from '../../src/threads/in-process.js';
import { WorkerPool } from '../../src/threads/pool.js';
import { targetDescriptions } from '../../src/threads/target-descriptions.js';

export interface PoolExporter {
  readonly app: FastifyInstance;
  readonly pool: WorkerPool;
  start(): void;
  /** The targets of a new config, handed to the pool. */
  reload(config: ExporterConfig): void;
  pollOnce(target?: string): Promise<void>;
  stop(): Promise<void>;
}

export interface PoolExporterOptions {
  readonly config: ExporterConfig;
  readonly logger: Logger;
  readonly version: string;
  readonly channels: ChannelFactory;
  /** Workers (default: the config's). */
  readonly size?: number;
}

/** Channels to a runtime on this thread polling with the collectors given (the built-in Catena collector unless one is). */
export function scriptedChannels(logger: Logger, collectorTable: readonly CollectorEntry[], catenaCollector?: CatenaCollectorFactory): ChannelFactory {
  return inProcessChannels({ log: logger, userAgent: 'flussonic-exporter/test', collectorTable, ...(catenaCollector ? { catenaCollector } : {}) });
}

export function poolExporter(options: PoolExporterOptions): PoolExporter {
  const { config, logger, version } = options;
  const self = new SelfMetrics({ version, demo: false });
  self.configReloaded(true, Date.now() / 1000);
  let freeBuffers: (buffers: ArrayBuffer[]) => void = () => undefined;
  const cache = new ExpositionCache({ free: (buffers) => freeBuffers(buffers) });
  // Worker log lines go where the logger's own go, as the exporter writes them.
  const destination = (logger as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym]!;
  const pool = new WorkerPool({ size: options.size ?? config.workers, channels: options.channels, cache, self, log: logger, writeLog: (line) => destination.write(line) });
  freeBuffers = (buffers) => pool.free(buffers);
  const app = buildApp({ logger, version, metricsPath: config.metricsPath, exposition: cache, self, statuses: () => pool.statuses(), ready: () => pool.ready() });
  pool.apply(targetDescriptions(config));
  let stopping: Promise<void> | undefined;
  return {
    app,
    pool,
    start: () => pool.start(),
    reload: (next) => pool.apply(targetDescriptions(next)),
    pollOnce: (target) => pool.pollOnce(target),
    stop() {
      stopping ??= pool.stop(4000).then(() => undefined);
      return stopping;
    },
  };
}
