/**
 * Client of Catena's operations log: GET {url}/tv-management/api/v1/operations with the header
 * X-Auth-Token, filtered by the configured query-parameter names (the service does not publish
 * them), `limit=<page_size>`, then `cursor=<next>` with the same filters until `next` is empty.
 *
 * Because the filter names are configuration guesses, every filter is also applied here to the
 * records that come back: a parameter the service ignores costs bandwidth, never correctness.
 */
import type { CatenaConfig } from '../config/types.js';
import type { ApiStats } from '../flussonic/api.js';
import { UpstreamHttp } from '../upstream/http.js';
import type { PollTiming } from '../poll/schedule.js';
import { cursorWalk } from '../upstream/walk.js';
import { parseOperation, type Operation } from './records.js';
import { formatIsoMs } from './time.js';

export const OPERATIONS_PATH = '/tv-management/api/v1/operations';
/** Endpoint template in errors and in flussonic_exporter_api_* metrics. */
export const OPERATIONS_ENDPOINT = '/operations';

export interface OperationsFilter {
  readonly type?: string;
  readonly subscriberId?: string;
  /** Inclusive lower bound on createdAt. */
  readonly createdFromMs?: number;
  /** Exclusive upper bound on createdAt. */
  readonly createdBeforeMs?: number;
}

/** A record that could not be read, with why. */
export interface RejectedRecord {
  readonly operationId?: string;
  readonly reason: string;
}

export interface OperationsPage {
  /** Records of this page not seen on an earlier page of the same walk, that match the filter. */
  readonly operations: Operation[];
  readonly rejected: RejectedRecord[];
}

export interface OperationsClientDeps {
  readonly stats: ApiStats;
  readonly userAgent?: string;
  /** Pause before the one retry of a failed GET (tests shorten it). */
  readonly retryBackoffMs?: number;
}

export class OperationsClient {
  private readonly http: UpstreamHttp;
  private closed = false;

  constructor(
    private readonly config: CatenaConfig,
    deps: OperationsClientDeps,
  ) {
    // The shared HTTP layer: deadline, body cap, typed errors with reasons, one retry, ApiStats.
    this.http = new UpstreamHttp({
      target: config.name,
      baseUrl: config.url,
      secretHeaders: { 'x-auth-token': config.apiKey },
      credentialHint: 'the configured api_key or api_key_file',
      timeoutMs: config.timeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      stats: deps.stats,
      connections: 2,
      userAgent: deps.userAgent,
      retryBackoffMs: deps.retryBackoffMs,
    });
  }

  /**
   * Reads every page for a filter, de-duplicated by operationId across pages. Throws an
   * UpstreamError on any failed page, on a cursor that repeats, a page that brings nothing new
   * while `next` goes on, or more than max_pages pages (reason cursor_loop), and on a body that is
   * not `{ operations: [objects], next }` (reason shape).
   */
  async *walk(filter: OperationsFilter, signal: AbortSignal): AsyncGenerator<OperationsPage, void, undefined> {
    const pages = cursorWalk(
      this.http,
      {
        endpoint: OPERATIONS_ENDPOINT,
        path: OPERATIONS_PATH,
        itemsKey: 'operations',
        key: 'operationId',
        query: this.query(filter),
        maxPages: this.config.maxPages,
      },
      signal,
    );
    for await (const records of pages) {
      const out: OperationsPage = { operations: [], rejected: [] };
      for (const raw of records) {
        const parsed = parseOperation(raw);
        if (!parsed.ok) out.rejected.push({ operationId: parsed.operationId, reason: parsed.reason });
        else if (matches(parsed.op, filter)) out.operations.push(parsed.op);
      }
      yield out;
    }
  }

  /** The whole walk for a filter, in one list (for the bounded look-ups of billing). */
  async readAll(filter: OperationsFilter, signal: AbortSignal): Promise<OperationsPage> {
    const all: OperationsPage = { operations: [], rejected: [] };
    for await (const page of this.walk(filter, signal)) {
      all.operations.push(...page.operations);
      all.rejected.push(...page.rejected);
    }
    return all;
  }

  /** Requests take the new timing's timeout from now on. */
  retime(timing: PollTiming): void {
    this.http.retime({ timeoutMs: timing.timeoutMs });
  }

  /** Closes the connection pool; a second call does nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.http.close();
  }

  private query(filter: OperationsFilter): Record<string, string> {
    const names = this.config.query;
    const q: Record<string, string> = {};
    if (filter.type !== undefined) q[names.type] = filter.type;
    if (filter.subscriberId !== undefined) q[names.subscriber] = filter.subscriberId;
    if (filter.createdFromMs !== undefined) q[names.createdFrom] = formatIsoMs(filter.createdFromMs);
    if (filter.createdBeforeMs !== undefined) q[names.createdBefore] = formatIsoMs(filter.createdBeforeMs);
    q.limit = String(this.config.pageSize);
    return q;
  }
}

function matches(op: Operation, f: OperationsFilter): boolean {
  if (f.type !== undefined && op.type !== f.type) return false;
  if (f.subscriberId !== undefined && op.subscriberId !== f.subscriberId) return false;
  if (f.createdFromMs !== undefined && op.createdAtMs < f.createdFromMs) return false;
  if (f.createdBeforeMs !== undefined && op.createdAtMs >= f.createdBeforeMs) return false;
  return true;
}
