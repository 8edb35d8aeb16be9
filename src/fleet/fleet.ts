/**
 * The fleet layer of one replica: the static config and the discovery sources' last good lists
 * become the target set, the shard filter keeps this replica's share, and `apply` hands the owned
 * targets to the pollers (today's poller.apply seam in src/exporter.ts). /sd and /probe read
 * owned(); the landing page reads describe().
 */
import type { Logger } from 'pino';
import type { ExporterConfig, ServerConfig } from '../config/types.js';
import { DiscoveryRefresher } from './refresher.js';
import type { SelfMetrics } from '../serve/self.js';
import { shardOf, type ShardSpec } from './shard.js';
import { buildTargetSet, type OwnedTarget, type TargetSet } from './target-set.js';

export interface FleetDeps {
  readonly shard: ShardSpec;
  readonly log: Logger;
  readonly self: SelfMetrics;
  /** Receives the config with only the owned servers and Catena services, after every change. */
  readonly apply: (owned: ExporterConfig) => void;
  readonly userAgent?: string;
  /** Receives every server known (static and discovered, owned or not) after every change: the event sink's names. */
  readonly known?: (servers: readonly ServerConfig[]) => void;
}

/** What the HTTP routes need of the fleet. */
export interface FleetView {
  readonly shard: ShardSpec;
  owned(): readonly OwnedTarget[];
  /** The shard a target of this name belongs to. */
  shardOf(name: string): number;
  /** `shard 1 of 3 (shards 0 to 2): polling 4 of 12 servers`, for the landing page. */
  describe(): string;
}

export class Fleet implements FleetView {
  readonly shard: ShardSpec;
  private config: ExporterConfig;
  private set: TargetSet;
  private readonly refresher: DiscoveryRefresher;
  private collisionsLogged = new Set<string>();

  constructor(
    private readonly deps: FleetDeps,
    config: ExporterConfig,
  ) {
    this.shard = deps.shard;
    this.config = config;
    deps.self.setGauge('flussonic_exporter_shard_info', { shard: String(deps.shard.shard), total_shards: String(deps.shard.totalShards) }, 1);
    this.refresher = new DiscoveryRefresher({
      log: deps.log.child({ component: 'discovery' }),
      userAgent: deps.userAgent,
      onChange: () => this.rebuild(),
      report: {
        refreshed: (source, ok, servers, nowSeconds) => {
          deps.self.setGauge('flussonic_exporter_discovery_targets', { source }, servers);
          deps.self.incCounter('flussonic_exporter_discovery_failures_total', { source }, ok ? 0 : 1);
          for (const reason of ['source_cap', 'total_cap']) deps.self.incCounter('flussonic_exporter_discovery_refused_total', { source, reason }, 0);
          if (ok) deps.self.setGauge('flussonic_exporter_discovery_last_success_timestamp_seconds', { source }, nowSeconds);
        },
        refused: (source, reason) => deps.self.incCounter('flussonic_exporter_discovery_refused_total', { source, reason }, 1),
        removed: (source) => {
          for (const name of ['flussonic_exporter_discovery_targets', 'flussonic_exporter_discovery_failures_total', 'flussonic_exporter_discovery_last_success_timestamp_seconds']) {
            deps.self.removeSeries(name, { source });
          }
          for (const reason of ['source_cap', 'total_cap']) deps.self.removeSeries('flussonic_exporter_discovery_refused_total', { source, reason });
        },
      },
    });
    this.set = buildTargetSet(config, [], deps.shard);
    this.configure(config);
  }

  /** A new static config (start, reload): sources are reconfigured and the owned set rebuilt. */
  configure(config: ExporterConfig): void {
    this.config = config;
    this.refresher.configure(config.discovery ?? [], config.templates ?? new Map(), config.discoveryLimits);
    this.rebuild();
  }

  start(): void {
    this.refresher.start();
  }

  stop(): void {
    this.refresher.stop();
  }

  /** Refreshes every discovery source now (tests and pollOnce). */
  refreshNow(): Promise<void> {
    return this.refresher.refreshNow();
  }

  owned(): readonly OwnedTarget[] {
    return this.set.owned;
  }

  shardOf(name: string): number {
    return shardOf(name, this.shard.totalShards);
  }

  describe(): string {
    const servers = this.set.owned.filter((t) => t.kind === 'server').length;
    const { shard, totalShards } = this.shard;
    const which = totalShards === 1 ? 'not sharded (one replica)' : `shard ${shard} of ${totalShards} (shards 0 to ${totalShards - 1})`;
    return `${which}: polling ${servers} of ${this.set.totalServers} servers`;
  }

  private rebuild(): void {
    this.set = buildTargetSet(this.config, this.refresher.lists(), this.shard);
    const fresh = this.set.collisions.filter((c) => !this.collisionsLogged.has(c));
    for (const collision of fresh) this.deps.log.warn({ component: 'discovery' }, collision);
    this.collisionsLogged = new Set(this.set.collisions);
    for (const kind of ['server', 'catena'] as const) {
      this.deps.self.setGauge('flussonic_exporter_owned_targets', { kind }, this.set.owned.filter((t) => t.kind === kind).length);
    }
    this.deps.known?.(this.set.servers);
    this.deps.apply(this.set.config);
  }
}
