/**
 * config + discovery -> target set -> shard filter -> owned targets (architecture.md, "Threads and
 * fleets"). Pure: the same inputs give the same owned set in every replica.
 *
 * Discovered servers become ServerConfigs exactly like static ones: their template's settings
 * plus the discovered name and URL. Names are the `server` label, so they must be unique:
 *  - a static server always wins over a discovered one with the same name or the same URL (the
 *    file is what the operator wrote);
 *  - between discovery sources, the one configured first wins (cluster_peers before file_sd).
 * Each loser is skipped and named in `collisions`, which the caller logs.
 */
import type { CatenaConfig, ExporterConfig, ServerConfig } from '../config/types.js';
import type { DiscoveredList } from './discovery-types.js';
import { ownsCatena, ownsServer, type ShardSpec } from './shard.js';

/** One target this replica owns, as /sd and /probe describe it. */
export interface OwnedTarget {
  readonly kind: 'server' | 'catena';
  readonly name: string;
  /** `static`, or the discovery source's name. */
  readonly source: string;
  /** Labels for /sd (file_sd labels of a discovered server). */
  readonly labels: Readonly<Record<string, string>>;
}

export interface TargetSet {
  /** The config with only the owned servers and Catena services: what the pollers get. */
  readonly config: ExporterConfig;
  readonly owned: readonly OwnedTarget[];
  /** Servers before the shard filter (static and discovered). */
  readonly totalServers: number;
  /** Every server before the shard filter (static and discovered): the names the event sink accepts. */
  readonly servers: readonly ServerConfig[];
  /** Discovered servers skipped for a name or URL already taken, one sentence each. */
  readonly collisions: readonly string[];
}

export function buildTargetSet(config: ExporterConfig, lists: readonly DiscoveredList[], shard: ShardSpec): TargetSet {
  const servers: { server: ServerConfig; source: string; labels: Readonly<Record<string, string>> }[] = config.servers.map((server) => ({ server, source: 'static', labels: {} }));
  const names = new Map(config.servers.map((s) => [s.name, 'static']));
  const staticUrls = new Set(config.servers.map((s) => s.url));
  const collisions: string[] = [];
  // Discovered servers are refused loopback (unless allowed) and link-local addresses at connect time.
  const addressGuard = { allowLoopback: config.discoveryLimits?.allowLoopback ?? false };
  for (const list of lists) {
    const template = config.templates?.get(list.template);
    if (!template) continue;
    for (const found of list.servers) {
      const taken = names.get(found.name);
      if (taken !== undefined) {
        collisions.push(`server ${JSON.stringify(found.name)} from discovery ${list.source} skipped: the name is taken by ${taken === 'static' ? 'a static server (static servers win)' : `discovery ${taken} (configured first)`}`);
        continue;
      }
      if (staticUrls.has(found.url)) {
        collisions.push(`server ${JSON.stringify(found.name)} from discovery ${list.source} skipped: a static server has the same URL (static servers win)`);
        continue;
      }
      names.set(found.name, list.source);
      servers.push({ server: { ...template, name: found.name, url: found.url, addressGuard }, source: list.source, labels: found.labels });
    }
  }
  // With the event sink on, polls report the streams they export (the events join them).
  if (config.events) for (const s of servers) s.server = { ...s.server, reportStreams: true };
  const ownedServers = servers.filter((s) => ownsServer(shard, s.server.name));
  const ownedCatena = config.catena.filter((c) => ownsCatena(shard, catenaShard(c)));
  const owned: OwnedTarget[] = [
    ...ownedServers.map((s) => ({ kind: 'server' as const, name: s.server.name, source: s.source, labels: s.labels })),
    ...ownedCatena.map((c) => ({ kind: 'catena' as const, name: c.name, source: 'static', labels: {} })),
  ];
  return {
    config: { ...config, servers: ownedServers.map((s) => s.server), catena: ownedCatena },
    owned,
    totalServers: servers.length,
    servers: servers.map((s) => s.server),
    collisions,
  };
}

export function catenaShard(catena: CatenaConfig): number {
  return catena.shard ?? 0;
}
