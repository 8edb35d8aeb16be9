/**
 * Builders of validated configs and a capturing logger for the runtime tests. The configs are
 * what loadConfig() would produce (defaults applied), written out so the tests do not depend on
 * the YAML loader.
 */
import pino, { type Logger } from 'pino';
import type { CatenaConfig, EventsConfig, ExporterConfig, ServerConfig, StreamFamilySwitches } from '../../src/config/types.js';
import type { ApiStats } from '../../src/flussonic/api.js';
import { STREAM_FAMILY_GROUPS } from '../../src/config/switches.js';
import { eventsSection } from '../../src/config/events-schema.js';

/** Upstream accounting that counts nothing: for a client built outside the exporter. */
export const NO_STATS: ApiStats = { request() {}, error() {}, responseBytes() {} };

export function serverConfig(name: string, url: string, overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    name,
    url,
    apiPrefix: '/streamer/api/v3',
    credentials: { kind: 'none' },
    timeoutMs: 2000,
    pollIntervalMs: 15_000,
    pageSize: 1000,
    maxPages: 1000,
    maxResponseBytes: 64 * 1024 * 1024,
    collectors: { streams: true, sessions: true, server: true, dvrs: false, cluster: false },
    streams: {},
    // Every optional family on, so the runtime tests see every family (the default is all off).
    families: Object.fromEntries(STREAM_FAMILY_GROUPS.map((g) => [g, true])) as StreamFamilySwitches,
    maxSeries: 500_000,
    staleAfterMs: 600_000,
    sessionsGroupBy: ['stream', 'proto'],
    ...overrides,
  };
}

export function catenaConfig(name: string, url: string, overrides: Partial<CatenaConfig> = {}): CatenaConfig {
  return {
    name,
    url,
    apiKey: 'catena-key-secret',
    pollIntervalMs: 60_000,
    timeoutMs: 2000,
    pageSize: 500,
    maxPages: 1000,
    maxResponseBytes: 64 * 1024 * 1024,
    start: { kind: 'now' },
    maxClockSkewMs: 5 * 60_000,
    query: { type: 'type', createdFrom: 'createdAt_gte', createdBefore: 'createdAt_lt', subscriber: 'subscriberId' },
    prices: new Map(),
    ...overrides,
  };
}

/** The event receiver's settings: the schema's defaults with `enabled: true`, then `overrides`. */
export function eventsConfig(overrides: Partial<EventsConfig> = {}): EventsConfig {
  return { ...eventsSection().parse({ enabled: true }), ...overrides };
}

export function exporterConfig(servers: readonly ServerConfig[], overrides: Partial<ExporterConfig> = {}): ExporterConfig {
  return {
    listenAddress: { host: '127.0.0.1', port: 0 },
    metricsPath: '/metrics',
    logLevel: 'debug',
    pollIntervalMs: 15_000,
    workers: 2,
    servers,
    catena: [],
    ...overrides,
  };
}

export interface CapturedLog {
  readonly logger: Logger;
  /** Every line written so far, parsed. */
  entries(): Record<string, unknown>[];
  /** Everything written so far, as written. */
  text(): string;
}

/** A pino logger at debug level that keeps what it writes in memory. */
export function captureLogger(): CapturedLog {
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  return {
    logger,
    entries: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    text: () => lines.join(''),
  };
}
