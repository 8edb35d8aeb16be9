/**
 * The Flussonic Media Server API v3 client: what collectors use (FlussonicApi) on top of the
 * shared upstream HTTP layer (src/upstream/http.ts: pool, deadlines, body cap, errors, stats) and
 * cursor walk (src/upstream/walk.ts). This file only knows Flussonic's conventions: the API
 * prefix, Basic or Bearer auth, and the collection query (`limit`, `select`, filters, `sort`,
 * then `cursor`; the items under the collection's own name). The `limit` is `page_size`, or less
 * for collections of large items (src/upstream/page-size.ts).
 */
import type { Logger } from 'pino';
import type { Credentials, ServerConfig } from '../config/types.js';
import { DEFAULT_MAX_CONNECTIONS_PER_SERVER } from '../config/bounds.js';
import type { ConnectionBudget } from '../upstream/connections.js';
import { UpstreamHttp } from '../upstream/http.js';
import { PageSize } from '../upstream/page-size.js';
import { cursorWalk } from '../upstream/walk.js';
import type { ApiStats, FlussonicApi, JsonObject, WalkOptions } from './api.js';
import type { PollTiming } from '../poll/schedule.js';

export interface FlussonicClientOptions {
  readonly config: ServerConfig;
  readonly stats: ApiStats;
  readonly log?: Logger;
  /** Pause before the one retry of a failed GET (default 250 ms; tests shorten it). */
  readonly retryBackoffMs?: number;
  readonly userAgent?: string;
  /** The thread's socket budget (src/upstream/connections.ts); none: unbounded. */
  readonly budget?: ConnectionBudget;
}

/** How long an idle connection is kept: past the pause between two polls, 10 min at most (the server's own hint wins). */
function keepAliveFor(pollIntervalMs: number): number {
  return Math.min(pollIntervalMs + 10_000, 10 * 60_000);
}

export class FlussonicClient implements FlussonicApi {
  private readonly http: UpstreamHttp;
  private readonly apiPrefix: string;
  /** The page size of each collection and select walked so far (a handful: one per collector's walk). */
  private readonly pageSizes = new Map<string, PageSize>();

  constructor(private readonly options: FlussonicClientOptions) {
    const { config } = options;
    this.apiPrefix = `/${config.apiPrefix.replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '');
    this.http = new UpstreamHttp({
      target: config.name,
      baseUrl: config.url,
      secretHeaders: authHeaders(config.credentials),
      secrets: credentialSecrets(config.credentials),
      credentialHint: 'the configured username/password or bearer token',
      timeoutMs: config.timeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      stats: options.stats,
      retryBackoffMs: options.retryBackoffMs,
      keepAliveTimeoutMs: keepAliveFor(config.pollIntervalMs),
      userAgent: options.userAgent,
      ...(config.tlsCa !== undefined ? { ca: config.tlsCa } : {}),
      connections: config.maxConnections ?? DEFAULT_MAX_CONNECTIONS_PER_SERVER,
      ...(config.addressGuard !== undefined ? { guard: config.addressGuard } : {}),
      ...(options.budget !== undefined ? { budget: options.budget } : {}),
      onRefused: (range) => options.stats.refused?.(range),
    });
  }

  /** The server is polled with a new timing from now on: requests take its timeout, idle connections outlast its interval. */
  retime(timing: PollTiming): void {
    this.http.retime({ timeoutMs: timing.timeoutMs, keepAliveTimeoutMs: keepAliveFor(timing.intervalMs) });
  }

  getJson(endpoint: string, path: string, signal: AbortSignal, query?: Readonly<Record<string, string>>): Promise<JsonObject> {
    return this.http.getJson(endpoint, this.apiPrefix + path, query, signal);
  }

  walk(collection: string, options: WalkOptions, signal: AbortSignal): AsyncGenerator<JsonObject[], void, undefined> {
    const endpoint = collection.startsWith('/') ? collection : `/${collection}`;
    const itemsKey = endpoint.slice(endpoint.lastIndexOf('/') + 1);
    const pageSize = this.pageSizeOf(endpoint, options.select);
    return cursorWalk(
      this.http,
      {
        endpoint,
        path: this.apiPrefix + endpoint,
        itemsKey,
        key: options.key,
        dedupe: options.dedupe,
        query: collectionQuery(pageSize.limit, options),
        maxPages: this.options.config.maxPages,
        onDuplicates: (dropped, pages) => this.options.log?.debug({ endpoint, dropped, pages }, 'cursor walk dropped items already seen on an earlier page'),
        onEnd: (bytes, items) => {
          const before = pageSize.limit;
          pageSize.learn(bytes, items);
          const limit = pageSize.limit;
          if (limit !== before) {
            this.options.log?.debug(
              { endpoint, limit, bytesPerItem: Math.round(bytes / items), goalBytes: pageSize.goalBytes },
              'page size of this walk changed: pages are kept within goalBytes of JSON, up to page_size items',
            );
          }
        },
      },
      signal,
    );
  }

  private pageSizeOf(endpoint: string, select: readonly string[]): PageSize {
    const key = `${endpoint}?${select.join(',')}`;
    let pageSize = this.pageSizes.get(key);
    if (!pageSize) {
      pageSize = new PageSize(this.options.config.pageSize, this.options.config.maxPages);
      this.pageSizes.set(key, pageSize);
    }
    return pageSize;
  }

  /** Closes the keep-alive pool after in-flight requests end (abort them first). */
  close(): Promise<void> {
    return this.http.close();
  }

  destroy(): Promise<void> {
    return this.http.destroy();
  }
}

/** `limit`, `select`, filters and `sort` of every page of a walk, in that order. */
export function collectionQuery(pageSize: number, options: WalkOptions): Record<string, string> {
  const query: Record<string, string> = { limit: String(pageSize) };
  if (options.select.length > 0) query.select = options.select.join(',');
  for (const [field, value] of Object.entries(options.filter ?? {})) query[field] = value;
  if (options.sort && options.sort.length > 0) query.sort = options.sort.join(',');
  return query;
}

/** The Authorization header for the configured credentials (none: no header). */
export function authHeaders(credentials: Credentials): Record<string, string> {
  switch (credentials.kind) {
    case 'basic':
      return { authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}` };
    case 'bearer':
      return { authorization: `Bearer ${credentials.token}` };
    case 'none':
      return {};
  }
}

function credentialSecrets(credentials: Credentials): string[] {
  switch (credentials.kind) {
    case 'basic':
      return [credentials.password];
    case 'bearer':
      return [credentials.token];
    case 'none':
      return [];
  }
}
