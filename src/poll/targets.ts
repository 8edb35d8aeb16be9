/**
 * The targets in the worker that owns them: the poller's Target built from a description (the
 * main thread's side is src/threads/target-descriptions.ts): a Flussonic server with its enabled
 * collectors (from the collector table) and one API client, or a Catena service with its
 * operations collector. See src/poll/poller.ts for the Target / TargetCollector interface.
 */
import type { Logger } from 'pino';
import type { CatenaCollector, CollectorEntry } from '../collect/types.js';
import type { CatenaConfig, ServerConfig } from '../config/types.js';
import type { ApiStats } from '../flussonic/api.js';
import { FlussonicClient } from '../flussonic/client.js';
import type { ConnectionBudget } from '../upstream/connections.js';
import type { Target, TargetCollectContext, TargetSpec } from './poller.js';
import type { AssignedTarget } from '../threads/protocol.js';
import { LedgerHandoff, OperationsCollector } from '../collect/operations.js';

/**
 * Makes the operations collector of one Catena service (src/collect/operations.ts). It owns its
 * HTTP client and accumulated counters and writes all of them into `ctx.out` on every good poll;
 * it never writes `flussonic_catena_up`, which the poller sets.
 */
export type CatenaCollectorFactory = (
  config: CatenaConfig,
  deps: { readonly stats: ApiStats; readonly log: Logger; readonly userAgent: string },
) => CatenaCollector;

export interface TargetDeps {
  readonly collectorTable: readonly CollectorEntry[];
  readonly catenaCollector: CatenaCollectorFactory;
  /** The accounting sink of one target's upstream client. */
  readonly stats: (target: string) => ApiStats;
  readonly log: Logger;
  readonly userAgent: string;
  /** The worker's socket budget, shared by every server's client. */
  readonly budget?: ConnectionBudget;
}

/** The poller's spec of an assigned target (in the worker that owns it). */
export function targetSpec({ id, target }: AssignedTarget, deps: TargetDeps): TargetSpec {
  const fingerprint = String(id);
  const timing = { intervalMs: target.config.pollIntervalMs, timeoutMs: target.config.timeoutMs };
  if (target.kind === 'server') {
    const config = target.config;
    return { kind: 'server', name: config.name, fingerprint, timing, create: () => serverTarget(config, deps) };
  }
  const config = target.config;
  return { kind: 'catena', name: config.name, fingerprint, timing, create: () => catenaTarget(config, deps.catenaCollector, deps) };
}

export function serverTarget(config: ServerConfig, deps: TargetDeps): Target {
  const log = deps.log.child({ server: config.name });
  const client = new FlussonicClient({
    config,
    stats: deps.stats(config.name),
    log,
    userAgent: deps.userAgent,
    ...(deps.budget !== undefined ? { budget: deps.budget } : {}),
  });
  const collectors = deps.collectorTable
    .filter((entry) => config.collectors[entry.name])
    .map((entry) => {
      const collector = entry.create(config);
      return {
        name: entry.name,
        collect: ({ signal, log: collectorLog, out }: TargetCollectContext) => collector.collect({ client, config, signal, log: collectorLog, out }),
      };
    });
  return {
    kind: 'server',
    name: config.name,
    labelName: 'server',
    maxSeries: config.maxSeries,
    ...(config.maxLabelValueBytes !== undefined ? { maxLabelValueBytes: config.maxLabelValueBytes } : {}),
    collectors,
    keepSeriesOnFailure: false,
    close: () => client.close(),
    retime: (timing) => client.retime(timing),
  };
}

/**
 * The built-in Catena collectors of one exporter. They share one ledger handoff, so a collector
 * replaced on a config reload passes its counters and read position to its successor: a reload
 * neither resets the counters nor loses or recounts the operations in between.
 */
export function builtInCatenaCollectors(): CatenaCollectorFactory {
  const handoff = new LedgerHandoff();
  return (config, { stats, log, userAgent }) => new OperationsCollector(config, { logger: log, stats, now: Date.now, userAgent, handoff });
}

export function catenaTarget(config: CatenaConfig, factory: CatenaCollectorFactory, deps: TargetDeps): Target {
  const collector = factory(config, {
    stats: deps.stats(config.name),
    log: deps.log.child({ catena: config.name }),
    userAgent: deps.userAgent,
  });
  return {
    kind: 'catena',
    name: config.name,
    labelName: 'catena',
    maxSeries: Number.POSITIVE_INFINITY,
    collectors: [{ name: 'operations', collect: (ctx) => collector.collect(ctx) }],
    keepSeriesOnFailure: true,
    close: () => collector.close(),
    retime: (timing) => collector.retime?.(timing),
  };
}
