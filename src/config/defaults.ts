/**
 * Every default of the config in one place. config.example.yaml shows these values and README
 * documents them; a test loads the example and checks that it names every known key.
 */
import { availableParallelism } from 'node:os';
import { COLLECTOR_DEFAULTS, SESSION_GROUP_BY_DEFAULT, STREAM_FAMILY_GROUPS, type StreamFamilyGroup } from './switches.js';
import type { CollectorName } from './types.js';

export const COLLECTOR_NAMES: readonly CollectorName[] = ['streams', 'sessions', 'server', 'dvrs', 'cluster'];

/**
 * Default of each `collectors:` switch: COLLECTOR_DEFAULTS (src/config/switches.ts), which
 * the collector table (src/collect/index.ts) reads too. A collector it does not name is off.
 */
function collectorDefaults(): Readonly<Record<CollectorName, boolean>> {
  const defaults: Readonly<Record<string, boolean>> = COLLECTOR_DEFAULTS;
  const out = {} as Record<CollectorName, boolean>;
  for (const name of COLLECTOR_NAMES) out[name] = defaults[name] ?? false;
  return Object.freeze(out);
}

export const DEFAULTS = Object.freeze({
  listenAddress: ':9228',
  listenPort: 9228,
  /** `:9228` (no host) listens on every IPv4 interface; `[::]:9228` for IPv6 too. */
  listenHostAny: '0.0.0.0',
  metricsPath: '/metrics',
  logLevel: 'info',
  pollIntervalMs: 15_000,
  /** Worker threads that poll: one per core the process may use. */
  workers: availableParallelism(),
  maxWorkers: 256,
  /** Below this, a poll loop would hammer the upstream. */
  minPollIntervalMs: 100,
  server: Object.freeze({
    apiPrefix: '/streamer/api/v3',
    timeoutMs: 10_000,
    pageSize: 1000,
    maxPages: 10_000,
    maxResponseBytes: 64 * 1024 * 1024,
    collectors: collectorDefaults(),
    /** Every optional family group off: the default budget (docs/cardinality.md). */
    families: Object.freeze(Object.fromEntries(STREAM_FAMILY_GROUPS.map((g) => [g, false])) as Record<StreamFamilyGroup, boolean>),
    /**
     * Per collector. The default families of 20,000 streams (20 series each) and the groups of
     * 200,000 sessions fit below it; a server beyond that sheds optional families first.
     */
    maxSeries: 500_000,
    staleAfterMs: 10 * 60_000,
    sessionsGroupBy: SESSION_GROUP_BY_DEFAULT,
  }),
  /** How often a discovery source is re-read (Prometheus' file_sd default is 5m; peers change faster). */
  discoveryRefreshMs: 60_000,
  catena: Object.freeze({
    pollIntervalMs: 60_000,
    timeoutMs: 10_000,
    pageSize: 500,
    maxPages: 10_000,
    /** Records with createdAt further ahead of the exporter's clock are rejected (not counted yet). */
    maxClockSkewMs: 5 * 60_000,
    maxResponseBytes: 64 * 1024 * 1024,
    query: Object.freeze({ type: 'type', created_from: 'createdAt_gte', created_before: 'createdAt_lt', subscriber: 'subscriberId' }),
  }),
});

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** Keys known at each level of the YAML; unknown keys are rejected with the closest of these. */
export const KNOWN_KEYS = Object.freeze({
  top: ['listen_address', 'metrics_path', 'log_level', 'poll_interval', 'workers', 'servers', 'catena', 'templates', 'discovery'],
  server: [
    'name', 'url', 'api_prefix', 'username', 'password', 'password_file', 'bearer_token', 'bearer_token_file',
    'timeout', 'poll_interval', 'page_size', 'max_pages', 'max_response_size', 'collectors', 'streams', 'families',
    'max_series', 'stale_after', 'sessions',
  ],
  template: [
    'api_prefix', 'username', 'password', 'password_file', 'bearer_token', 'bearer_token_file',
    'timeout', 'poll_interval', 'page_size', 'max_pages', 'max_response_size', 'collectors', 'streams', 'families',
    'max_series', 'sessions',
  ],
  discovery: ['refresh_interval', 'cluster_peers', 'file_sd'],
  discoveryClusterPeers: ['name', 'seeds', 'template', 'refresh_interval'],
  discoveryFileSd: ['name', 'files', 'template', 'refresh_interval'],
  serverCollectors: [...COLLECTOR_NAMES],
  serverStreams: ['include', 'exclude'],
  serverFamilies: [...STREAM_FAMILY_GROUPS],
  serverSessions: ['group_by'],
  catena: [
    'name', 'url', 'api_key', 'api_key_file', 'poll_interval', 'timeout', 'page_size', 'max_pages', 'max_response_size',
    'start', 'max_clock_skew', 'state_file', 'query', 'prices', 'shard',
  ],
  catenaQuery: ['type', 'created_from', 'created_before', 'subscriber'],
  catenaPrice: ['amount', 'per', 'currency'],
});
