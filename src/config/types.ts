/**
 * The validated configuration. Only loadConfig() makes these (defaults applied, durations in
 * milliseconds, secrets resolved); the poller and collectors never see the loose YAML input.
 */
import type { LevelWithSilent } from 'pino';
import type { StreamFamilyGroup } from '../metrics/budget.js';

export type CollectorName = 'streams' | 'sessions' | 'server' | 'dvrs';

/** Resolved credentials: never logged, never rendered, never put into an error message. */
export type Credentials =
  | { readonly kind: 'none' }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'bearer'; readonly token: string };

export interface StreamFilter {
  readonly include?: RegExp;
  readonly exclude?: RegExp;
}

/**
 * `servers[].families`: one switch per group of optional stream families (src/metrics/budget.ts
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
   * only then core series dropped (src/metrics/budget.ts); both are counted.
   */
  readonly maxSeries: number;
  /** Session groups not seen for this long (and without open sessions) are withdrawn and freed. */
  readonly staleAfterMs: number;
  /** Grouping labels of the sessions families. */
  readonly sessionsGroupBy: readonly string[];
}

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
  readonly stateFile?: string;
  readonly query: {
    readonly type: string;
    readonly createdFrom: string;
    readonly createdBefore: string;
    readonly subscriber: string;
  };
  readonly prices: ReadonlyMap<string, CatenaPrice>;
}

export interface ExporterConfig {
  readonly listenAddress: { readonly host: string; readonly port: number };
  readonly metricsPath: string;
  readonly logLevel: Extract<LevelWithSilent, 'debug' | 'info' | 'warn' | 'error'>;
  readonly pollIntervalMs: number;
  readonly servers: readonly ServerConfig[];
  readonly catena: readonly CatenaConfig[];
}
