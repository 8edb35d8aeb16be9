/**
 * The validated configuration. Only loadConfig() makes these (defaults applied, durations in
 * milliseconds, secrets resolved); the poller and collectors never see the loose YAML input.
 */
import type { LevelWithSilent } from 'pino';
import type { StreamFilterSources } from './regex.js';
import type { StreamFamilyGroup } from './switches.js';

export type CollectorName = 'streams' | 'sessions' | 'server' | 'dvrs' | 'cluster';

/** Resolved credentials: never logged, never rendered, never put into an error message. */
export type Credentials =
  | { readonly kind: 'none' }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'bearer'; readonly token: string };

/**
 * `streams.include` / `streams.exclude` by their sources (plain data; compiled in regex.ts by
 * compileStreamFilter() / namePatternMatches()).
 */
export type StreamFilter = StreamFilterSources;

/**
 * `servers[].families`: one switch per group of optional stream families (src/config/switches.ts
 * says which families each enables). All off by default.
 */
export type StreamFamilySwitches = Readonly<Record<StreamFamilyGroup, boolean>>;

export interface ServerConfig {
  readonly name: string;
  /** Origin and optional base path, without credentials: `http://flussonic-1:80`. */
  readonly url: string;
  readonly apiPrefix: string;
  readonly credentials: Credentials;
  readonly timeoutMs: number;
  readonly pollIntervalMs: number;
  readonly pageSize: number;
  /** Page cap of one cursor walk (guards a walk that never ends). */
  readonly maxPages: number;
  /** Response body cap in bytes. */
  readonly maxResponseBytes: number;
  readonly collectors: Readonly<Record<CollectorName, boolean>>;
  readonly streams: StreamFilter;
  readonly families: StreamFamilySwitches;
  /**
   * Cap of series per collector: beyond it optional, then default families are shed whole, and
   * only then core series dropped (src/families/define.ts); both are counted.
   */
  readonly maxSeries: number;
  /** Session groups not seen for this long (and without open sessions) are withdrawn and freed. */
  readonly staleAfterMs: number;
  /** Grouping labels of the sessions families. */
  readonly sessionsGroupBy: readonly string[];
}

/** A server's settings without its name and URL: a `templates:` entry, for discovered servers. */
export type ServerSettings = Omit<ServerConfig, 'name' | 'url'>;

/** `discovery.cluster_peers[]`: the peers that GET /cluster/peers of the seeds lists. */
export interface ClusterPeersSource {
  readonly kind: 'cluster_peers';
  /** The `source` label of the discovery self-metrics. */
  readonly name: string;
  /** Base URLs of the seed servers (read with the template's credentials). */
  readonly seeds: readonly string[];
  /** Name of the template every discovered peer (and the seed request) takes its settings from. */
  readonly template: string;
  readonly refreshIntervalMs: number;
}

/** `discovery.file_sd[]`: Prometheus file_sd target files (JSON or YAML). */
export interface FileSdSource {
  readonly kind: 'file_sd';
  readonly name: string;
  /** Absolute paths; the file name part may hold `*` (a glob, as Prometheus allows). */
  readonly files: readonly string[];
  readonly template: string;
  readonly refreshIntervalMs: number;
}

export type DiscoverySource = ClusterPeersSource | FileSdSource;

export interface CatenaPrice {
  readonly amount: number;
  readonly perMs: number;
  readonly currency: string;
}

export interface CatenaConfig {
  readonly name: string;
  /** Base URL; /tv-management/api/v1/operations is appended. */
  readonly url: string;
  readonly apiKey: string;
  readonly pollIntervalMs: number;
  readonly timeoutMs: number;
  readonly pageSize: number;
  readonly maxPages: number;
  readonly maxResponseBytes: number;
  /** 'now', or how much history to read at first start, in ms. */
  readonly start: { readonly kind: 'now' } | { readonly kind: 'history'; readonly ms: number };
  /** A record created more than this ahead of the exporter's clock is not counted and does not move the position. */
  readonly maxClockSkewMs: number;
  readonly stateFile?: string;
  readonly query: {
    readonly type: string;
    readonly createdFrom: string;
    readonly createdBefore: string;
    readonly subscriber: string;
  };
  readonly prices: ReadonlyMap<string, CatenaPrice>;
  /** The shard whose replica polls this service (default 0; wraps around total_shards). */
  readonly shard?: number;
}

export interface ExporterConfig {
  readonly listenAddress: { readonly host: string; readonly port: number };
  readonly metricsPath: string;
  readonly logLevel: Extract<LevelWithSilent, 'debug' | 'info' | 'warn' | 'error'>;
  readonly pollIntervalMs: number;
  /** Worker threads that poll the targets (each owns a fixed set of them); see docs/runtime.md. */
  readonly workers: number;
  readonly servers: readonly ServerConfig[];
  readonly catena: readonly CatenaConfig[];
  /** `templates:` by name (absent: none). */
  readonly templates?: ReadonlyMap<string, ServerSettings>;
  /** `discovery:` sources (absent: none); their servers join the static `servers:` list. */
  readonly discovery?: readonly DiscoverySource[];
}
