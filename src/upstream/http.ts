/**
 * The HTTP pieces every upstream client shares (Flussonic API v3, Catena operations log): one
 * keep-alive undici Pool per target, a deadline on every request, the response body cap enforced
 * while streaming, one JSON.parse per body, the mapping of every failure to a typed UpstreamError
 * with a `reason`, one retry of a failed idempotent GET, and the accounting that feeds the
 * exporter's self-metrics (ApiStats).
 *
 * Secrets: the headers given in `secretHeaders` (Authorization, X-Auth-Token) are sent and never
 * read back. Error texts are built from the target name, the endpoint template, status codes and
 * error codes; as a second line of defence every message is passed through `redact()`, which
 * replaces any occurrence of a configured secret.
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import {
  upstreamError,
  type UpstreamError,
} from '../lib/errors.js';
import type { ApiStats, JsonObject } from '../flussonic/api.js';
import { USER_AGENT_PRODUCT } from '../version.js';
import { keepWasmOnBaselineTier } from './wasm-tier.js';
import { bodyText } from './body-text.js';
import { addressRefusal, type AddressGuard, type RefusedRange } from './address-guard.js';
import { upstreamConnector, type ConnectionBudget, type IdlePool } from './connections.js';

export type Query = Readonly<Record<string, string>>;

/** A parsed JSON object and the size of the body it came from. */
export interface JsonPage {
  readonly body: JsonObject;
  readonly bytes: number;
}

export interface UpstreamHttpOptions {
  /** Configured target name (`edge-1`): in every error. */
  readonly target: string;
  /** Origin and optional base path (`http://flussonic-1:80`, `https://host/prefix`). */
  readonly baseUrl: string;
  /** Headers sent on every request whose values are secrets (Authorization, X-Auth-Token). */
  readonly secretHeaders?: Readonly<Record<string, string>>;
  /** Further strings never to appear in an error text (a password, a token). */
  readonly secrets?: readonly string[];
  /** Which configured credentials to check when the upstream refuses them (`the api_key`). */
  readonly credentialHint: string;
  /** Deadline of one request attempt, headers and body, in ms. */
  readonly timeoutMs: number;
  /** Response body cap in bytes: a longer body is cut off with reason `too_large`. */
  readonly maxResponseBytes: number;
  readonly stats: ApiStats;
  /** Pause before the single retry of a failed GET (default 250 ms). */
  readonly retryBackoffMs?: number;
  /** Parallel connections of the pool (default 4: the collectors of one poll run side by side). */
  readonly connections?: number;
  /** How long an idle keep-alive connection is kept when the server gives no hint (default 60 s). */
  readonly keepAliveTimeoutMs?: number;
  readonly userAgent?: string;
  /** PEM certificates of the CAs an https upstream's certificate must chain to (default: Node's). */
  readonly ca?: string;
  /** Refuse loopback / link-local addresses at connect time (discovered servers; src/upstream/address-guard.ts). */
  readonly guard?: AddressGuard;
  /** The thread's socket budget (src/upstream/connections.ts); none: unbounded. */
  readonly budget?: ConnectionBudget;
  /** Called for each connection refused by `guard`. */
  readonly onRefused?: (range: RefusedRange) => void;
}

const DEFAULT_RETRY_BACKOFF_MS = 250;
/** How much of an error response body is read (and dropped) so the connection can be reused. */
const ERROR_BODY_DRAIN_BYTES = 64 * 1024;

/** Error codes of failures where the request got no response but the connection was the problem. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/** How long one request attempt may take, and how long an idle connection is kept (ms). */
export interface HttpTiming {
  readonly timeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

export class UpstreamHttp implements IdlePool {
  private pool: Pool;
  private timing: HttpTiming;
  private readonly origin: string;
  private inFlight = 0;
  private readonly basePath: string;
  private readonly headers: Record<string, string>;
  private readonly secrets: string[];
  private readonly retryBackoffMs: number;
  private closed = false;

  constructor(private readonly options: UpstreamHttpOptions) {
    const url = new URL(options.baseUrl);
    // URL.origin never includes userinfo, so a URL written with credentials cannot leak them here.
    this.basePath = url.pathname.replace(/\/+$/, '');
    keepWasmOnBaselineTier();
    this.origin = url.origin;
    this.timing = { timeoutMs: options.timeoutMs, keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 60_000 };
    this.pool = this.newPool();
    options.budget?.register(this);
    this.headers = { accept: 'application/json', 'user-agent': options.userAgent ?? USER_AGENT_PRODUCT, ...options.secretHeaders };
    this.secrets = [...Object.values(options.secretHeaders ?? {}), ...(options.secrets ?? [])].filter((s) => s.length >= 3);
    this.retryBackoffMs = options.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS;
  }

  get target(): string {
    return this.options.target;
  }

  private newPool(): Pool {
    const { options } = this;
    const { timeoutMs, keepAliveTimeoutMs } = this.timing;
    const connect = options.guard === undefined && options.budget === undefined
      ? { timeout: timeoutMs, ...(options.ca !== undefined ? { ca: options.ca } : {}) }
      : upstreamConnector({ timeoutMs, ...(options.ca !== undefined ? { ca: options.ca } : {}), ...(options.guard ? { guard: options.guard } : {}), ...(options.budget ? { budget: options.budget } : {}) });
    return new Pool(this.origin, {
      connections: options.connections ?? 4,
      pipelining: 1,
      keepAliveTimeout: keepAliveTimeoutMs,
      keepAliveMaxTimeout: 10 * 60_000,
      // Our own per-attempt deadline fires first and gives the precise reason; these are a backstop.
      headersTimeout: timeoutMs + 1000,
      bodyTimeout: timeoutMs + 1000,
      connect,
    });
  }

  /** IdlePool: no request in flight and a socket that may be idle. */
  idle(): boolean {
    return !this.closed && this.inFlight === 0 && this.pool.stats.connected > 0;
  }

  /** IdlePool: closes the idle sockets (the budget needs their slots); the next request connects anew. */
  recycle(): void {
    if (this.closed) return;
    const old = this.pool;
    this.pool = this.newPool();
    void old.close().catch(() => undefined);
  }

  /**
   * Times requests and keeps idle connections by `timing` from now on (the keep-alive as it was
   * when none is given): the pool is made anew with it (a pool's timeouts are fixed), the old one
   * closing once its requests in flight have ended.
   */
  retime(timing: Pick<HttpTiming, 'timeoutMs'> & Partial<HttpTiming>): void {
    const { timeoutMs, keepAliveTimeoutMs = this.timing.keepAliveTimeoutMs } = timing;
    if (timeoutMs === this.timing.timeoutMs && keepAliveTimeoutMs === this.timing.keepAliveTimeoutMs) return;
    this.timing = { timeoutMs, keepAliveTimeoutMs };
    this.recycle();
  }

  /** Counts an error found above this layer (a walk guard, a shape check) like the ones found here. */
  countError(endpoint: string, reason: UpstreamError['reason']): void {
    this.options.stats.error(endpoint, reason);
  }

  /**
   * GET one JSON object. `endpoint` is the path template for metrics and errors (`/streams`);
   * `path` the concrete path below the base URL. A failed attempt is retried once after a short
   * backoff unless the failure cannot be cured by repeating (auth, too_large, shape, 4xx) or the
   * poll's signal has fired.
   */
  async getJson(endpoint: string, path: string, query: Query | undefined, signal: AbortSignal): Promise<JsonObject> {
    return (await this.getPage(endpoint, path, query, signal)).body;
  }

  /** getJson(), with the byte size of the body (for a walk's page size: src/upstream/page-size.ts). */
  async getPage(endpoint: string, path: string, query: Query | undefined, signal: AbortSignal): Promise<JsonPage> {
    const fullPath = this.basePath + path + encodeQuery(query);
    this.inFlight++;
    try {
      return await this.attempt(endpoint, fullPath, signal);
    } catch (first) {
      if (!(first instanceof RetryableFailure) || signal.aborted || this.closed) throw unwrap(first);
      const waited = await abortableDelay(this.retryBackoffMs, signal);
      if (!waited) throw first.error;
      return await this.attempt(endpoint, fullPath, signal).catch((second: unknown) => {
        throw unwrap(second);
      });
    } finally {
      this.inFlight--;
      // Other targets wait for a socket: this one's idle sockets go first.
      const budget = this.options.budget;
      if (budget !== undefined && budget.waiters > 0 && this.idle()) this.recycle();
    }
  }

  /** Closes idle connections and waits for in-flight requests (call after aborting them). */
  async close(): Promise<void> {
    this.closed = true;
    this.options.budget?.unregister(this);
    await this.pool.close();
  }

  /** Drops every connection at once, in-flight requests included. */
  async destroy(): Promise<void> {
    this.closed = true;
    this.options.budget?.unregister(this);
    await this.pool.destroy();
  }

  private async attempt(endpoint: string, fullPath: string, signal: AbortSignal): Promise<JsonPage> {
    const { stats, maxResponseBytes } = this.options;
    const { timeoutMs } = this.timing;
    // Not sent, so not counted: the poll is already over.
    if (signal.aborted) throw new Failure(this.abortedError(endpoint, signal, undefined));

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onOuterAbort = () => controller.abort();
    signal.addEventListener('abort', onOuterAbort, { once: true });
    let bytes = 0;

    /** A request that got no (complete) response; `bodyBytes` is set once the body had started. */
    const noResponse = (cause: unknown, bodyBytes?: number): Error => {
      if (timedOut) return this.fail(endpoint, this.timeoutError(endpoint, cause), true);
      if (signal.aborted) return this.fail(endpoint, this.abortedError(endpoint, signal, cause), false);
      const refused = addressRefusal(cause);
      if (refused !== undefined) {
        this.options.onRefused?.(refused.range);
        return this.fail(endpoint, upstreamError('address_refused', { target: this.target, endpoint }, { address: refused.address, why: refused.message }, { cause }), false);
      }
      const code = errorCode(cause);
      if (code && TIMEOUT_CODES.has(code)) return this.fail(endpoint, this.timeoutError(endpoint, cause), true);
      const what = bodyBytes === undefined ? 'connection failed' : `connection lost after ${bodyBytes} bytes of the body`;
      return this.fail(
        endpoint,
        upstreamError('connection_failed', { target: this.target, endpoint }, { what, causeText: this.redact(describeCause(cause)) }, { cause }),
        true,
      );
    };

    try {
      let response: Dispatcher.ResponseData;
      try {
        response = await this.pool.request({ path: fullPath, method: 'GET', headers: this.headers, signal: controller.signal });
      } catch (cause) {
        stats.request(endpoint, 'error');
        throw noResponse(cause);
      }
      const { statusCode, body } = response;
      stats.request(endpoint, String(statusCode));

      if (statusCode < 200 || statusCode >= 300) {
        await body.dump({ limit: ERROR_BODY_DRAIN_BYTES }).catch(() => undefined);
        if (statusCode === 401 || statusCode === 403) {
          throw this.fail(
            endpoint,
            upstreamError('auth_refused', { target: this.target, endpoint }, { status: statusCode, hint: this.options.credentialHint }),
            false,
          );
        }
        const retryable = statusCode >= 500 || statusCode === 429;
        throw this.fail(endpoint, upstreamError('http_status', { target: this.target, endpoint }, { status: statusCode }), retryable);
      }

      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxResponseBytes) {
        body.destroy();
        throw this.fail(endpoint, this.tooLarge(endpoint, `Content-Length ${declared}`), false);
      }

      const chunks: Buffer[] = [];
      try {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          if (bytes > maxResponseBytes) {
            body.destroy();
            throw this.fail(endpoint, this.tooLarge(endpoint, `more than ${maxResponseBytes} bytes read`), false);
          }
          chunks.push(chunk);
        }
      } catch (cause) {
        if (cause instanceof Failure) throw cause;
        throw noResponse(cause, bytes);
      }
      return { body: this.parse(endpoint, chunks, bytes), bytes };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onOuterAbort);
      if (bytes > 0) stats.responseBytes(endpoint, bytes);
    }
  }

  private parse(endpoint: string, chunks: Buffer[], bytes: number): JsonObject {
    if (bytes === 0) throw this.fail(endpoint, upstreamError('empty_body', { target: this.target, endpoint }, {}), true);
    let value: unknown;
    const text = bodyText(chunks, bytes);
    try {
      value = JSON.parse(text);
    } catch (cause) {
      // The SyntaxError text quotes the body; only its kind is kept, upstream text stays out of logs.
      const kind = isTruncation(cause, text.length) ? 'truncated JSON' : 'not valid JSON';
      throw this.fail(endpoint, upstreamError('invalid_json', { target: this.target, endpoint }, { got: kind, bytes }), true);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw this.fail(endpoint, upstreamError('not_an_object', { target: this.target, endpoint }, { got: jsonTypeOf(value) }), false);
    }
    return value as JsonObject;
  }

  private tooLarge(endpoint: string, what: string): UpstreamError {
    return upstreamError('body_too_large', { target: this.target, endpoint }, { cap: this.options.maxResponseBytes, got: what });
  }

  private timeoutError(endpoint: string, cause: unknown): UpstreamError {
    return upstreamError('response_timeout', { target: this.target, endpoint }, { ms: this.timing.timeoutMs }, { cause });
  }

  private abortedError(endpoint: string, signal: AbortSignal, cause: unknown): UpstreamError {
    const why = signal.reason instanceof Error ? signal.reason.message : 'aborted';
    return upstreamError('request_aborted', { target: this.target, endpoint }, { why: this.redact(why) }, { cause });
  }

  /** Counts the error and wraps it with whether repeating the request might help. */
  private fail(endpoint: string, error: UpstreamError, retryable: boolean): Failure {
    this.options.stats.error(endpoint, error.reason);
    return retryable ? new RetryableFailure(error) : new Failure(error);
  }

  private redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    return out;
  }
}

/** An attempt's failure, already counted; carries the error to throw. */
class Failure extends Error {
  constructor(readonly error: UpstreamError) {
    super(error.message);
  }
}
class RetryableFailure extends Failure {}

function unwrap(e: unknown): unknown {
  return e instanceof Failure ? e.error : e;
}

/** Waits `ms` unless the signal fires first; resolves true when the full time passed. */
function abortableDelay(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `?a=1&b=x,y`: values are percent-encoded except `,` (list separator in select/sort/filters,
 * kept literal as in Flussonic's documentation).
 */
export function encodeQuery(query: Query | undefined): string {
  if (!query) return '';
  let out = '';
  for (const [key, value] of Object.entries(query)) {
    out += `${out ? '&' : '?'}${encodeURIComponent(key)}=${encodeURIComponent(value).replace(/%2C/gi, ',')}`;
  }
  return out;
}

/** Whether JSON.parse failed because the text ended early (the error points at its end). */
function isTruncation(error: unknown, length: number): boolean {
  if (!(error instanceof Error)) return false;
  if (/end of (JSON )?input|Unterminated/i.test(error.message)) return true;
  const at = /at position (\d+)/.exec(error.message);
  return at !== null && Number(at[1]) >= length;
}

function errorCode(e: unknown): string | undefined {
  if (typeof e === 'object' && e !== null && 'code' in e && typeof (e as { code: unknown }).code === 'string') return (e as { code: string }).code;
  return undefined;
}

function describeCause(e: unknown): string {
  if (e instanceof Error) {
    const code = errorCode(e);
    return code && !e.message.includes(code) ? `${code}: ${e.message}` : e.message || e.name;
  }
  return String(e);
}

export function jsonTypeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}
