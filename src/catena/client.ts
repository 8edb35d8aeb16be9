/**
 * Client of Catena's operations log: GET {url}/tv-management/api/v1/operations with the header
 * X-Auth-Token, filtered by the configured query-parameter names (the service does not publish
 * them), `limit=<page_size>`, then `cursor=<next>` with the same filters until `next` is empty.
 *
 * Because the filter names are configuration guesses, every filter is also applied here to the
 * records that come back: a parameter the service ignores costs bandwidth, never correctness.
 */
import { Agent, type Dispatcher } from 'undici';
import type { CatenaConfig } from '../config/types.js';
import { UpstreamError, UpstreamShapeError } from '../errors.js';
import type { ApiStats } from '../flussonic/api.js';
import { getJson, redact } from './http.js';
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
  /** Defaults to an own connection pool, closed by close(). */
  readonly dispatcher?: Dispatcher;
}

export class OperationsClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly baseUrl: string;

  constructor(
    private readonly config: CatenaConfig,
    private readonly deps: OperationsClientDeps,
  ) {
    this.baseUrl = config.url.replace(/\/+$/, '') + OPERATIONS_PATH;
    this.ownsDispatcher = !deps.dispatcher;
    this.dispatcher = deps.dispatcher ?? new Agent({ connections: 2, connect: { timeout: config.timeoutMs } });
  }

  /**
   * Reads every page for a filter. Throws an UpstreamError on any failed page; on a cursor that
   * repeats, a page that brings nothing new while `next` goes on, or more than max_pages pages
   * (reason cursor_loop); on a body that is not `{ operations: [...], next }` (reason shape).
   */
  async *walk(filter: OperationsFilter, signal: AbortSignal): AsyncGenerator<OperationsPage, void, undefined> {
    const seenIds = new Set<string>();
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      if (page > this.config.maxPages) throw this.loop(`more than ${this.config.maxPages} pages (max_pages)`);
      const doc = await getJson({
        dispatcher: this.dispatcher,
        url: this.url(filter, cursor),
        headers: { 'x-auth-token': this.config.apiKey },
        secrets: [this.config.apiKey],
        timeoutMs: this.config.timeoutMs,
        maxResponseBytes: this.config.maxResponseBytes,
        signal,
        target: this.config.name,
        endpoint: OPERATIONS_ENDPOINT,
        stats: this.deps.stats,
      });
      const { records, next } = this.envelope(doc, page);
      const out: OperationsPage = { operations: [], rejected: [] };
      let fresh = 0;
      for (const raw of records) {
        const parsed = parseOperation(raw);
        const id = parsed.ok ? parsed.op.operationId : parsed.operationId;
        if (id !== undefined) {
          if (seenIds.has(id)) continue;
          seenIds.add(id);
        }
        fresh++;
        if (!parsed.ok) out.rejected.push({ operationId: parsed.operationId, reason: redact(parsed.reason, [this.config.apiKey]) });
        else if (matches(parsed.op, filter)) out.operations.push(parsed.op);
      }
      yield out;
      if (next === undefined) return;
      if (seenCursors.has(next)) throw this.loop(`page ${page} returned a cursor already followed`);
      if (fresh === 0) throw this.loop(`page ${page} brought no operation not seen before, but a next cursor`);
      seenCursors.add(next);
      cursor = next;
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

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private url(filter: OperationsFilter, cursor: string | undefined): URL {
    const url = new URL(this.baseUrl);
    const q = this.config.query;
    const p = url.searchParams;
    if (filter.type !== undefined) p.set(q.type, filter.type);
    if (filter.subscriberId !== undefined) p.set(q.subscriber, filter.subscriberId);
    if (filter.createdFromMs !== undefined) p.set(q.createdFrom, formatIsoMs(filter.createdFromMs));
    if (filter.createdBeforeMs !== undefined) p.set(q.createdBefore, formatIsoMs(filter.createdBeforeMs));
    p.set('limit', String(this.config.pageSize));
    if (cursor !== undefined) p.set('cursor', cursor);
    return url;
  }

  private envelope(doc: unknown, page: number): { records: unknown[]; next: string | undefined } {
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw this.shape(`page ${page}: expected a JSON object with "operations", got ${Array.isArray(doc) ? 'an array' : doc === null ? 'null' : typeof doc}`);
    const d = doc as Record<string, unknown>;
    if (!Array.isArray(d.operations)) throw this.shape(`page ${page}: "operations" should be an array, got ${d.operations === undefined ? 'nothing' : typeof d.operations}`);
    const next = d.next;
    if (next !== undefined && next !== null && typeof next !== 'string') throw this.shape(`page ${page}: "next" should be a string or null, got ${typeof next}`);
    return { records: d.operations, next: typeof next === 'string' && next !== '' ? next : undefined };
  }

  private shape(message: string): UpstreamError {
    this.deps.stats.error(OPERATIONS_ENDPOINT, 'shape');
    return new UpstreamShapeError('shape', this.config.name, OPERATIONS_ENDPOINT, message);
  }

  private loop(message: string): UpstreamError {
    this.deps.stats.error(OPERATIONS_ENDPOINT, 'cursor_loop');
    return new UpstreamError('cursor_loop', this.config.name, OPERATIONS_ENDPOINT, message);
  }
}

function matches(op: Operation, f: OperationsFilter): boolean {
  if (f.type !== undefined && op.type !== f.type) return false;
  if (f.subscriberId !== undefined && op.subscriberId !== f.subscriberId) return false;
  if (f.createdFromMs !== undefined && op.createdAtMs < f.createdFromMs) return false;
  if (f.createdBeforeMs !== undefined && op.createdAtMs >= f.createdBeforeMs) return false;
  return true;
}
