/**
 * One GET of a JSON document with a deadline, a body cap and typed errors, with the per-request
 * accounting of ApiStats. Written for the operations log while the shared HTTP pieces of the
 * Flussonic client (branch core-runtime) did not exist yet; it has no Catena specifics, so the
 * two can be unified into one module later.
 *
 * Secrets travel only in headers. Error texts are built from the target name, the endpoint
 * template, the status and short upstream error titles, and every text passes through redact()
 * with the request's secrets, so a service echoing the key back cannot leak it into a log line.
 */
import { request, type Dispatcher } from 'undici';
import { UpstreamError, UpstreamHttpError, UpstreamShapeError, UpstreamTimeoutError, type ApiErrorReason } from '../errors.js';
import type { ApiStats } from '../flussonic/api.js';

export interface GetJsonRequest {
  readonly dispatcher: Dispatcher;
  /** Full URL including the query string. Never appears in an error. */
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  /** Values to cut out of any error text (API keys). */
  readonly secrets: readonly string[];
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly signal: AbortSignal;
  /** Configured name of the target, for errors. */
  readonly target: string;
  /** Endpoint template, for errors and ApiStats (`/operations`). */
  readonly endpoint: string;
  readonly stats: ApiStats;
}

/** How much of an error response is read to find its `errors[].title`. */
const ERROR_BODY_PEEK_BYTES = 4096;

export async function getJson(req: GetJsonRequest): Promise<unknown> {
  const { endpoint, stats } = req;
  const deadline = AbortSignal.timeout(req.timeoutMs);
  const signal = AbortSignal.any([req.signal, deadline]);
  const fail = (reason: ApiErrorReason, message: string, options: { cause?: unknown; status?: number } = {}): never => {
    stats.error(endpoint, reason);
    const text = redact(message, req.secrets);
    const cause = options.cause === undefined ? undefined : redactError(options.cause, req.secrets);
    const opts = { cause, status: options.status };
    if (reason === 'timeout') throw new UpstreamTimeoutError(reason, req.target, endpoint, text, opts);
    if (reason === 'http' || reason === 'auth') throw new UpstreamHttpError(reason, req.target, endpoint, text, opts);
    if (reason === 'invalid_json' || reason === 'shape') throw new UpstreamShapeError(reason, req.target, endpoint, text, opts);
    throw new UpstreamError(reason, req.target, endpoint, text, opts);
  };
  const transportFailure = (err: unknown, phase: string): never => {
    if (deadline.aborted) return fail('timeout', `no complete response within ${req.timeoutMs} ms (${phase})`, { cause: err });
    if (req.signal.aborted) return fail('timeout', `request aborted by the poll deadline or shutdown (${phase})`, { cause: err });
    const code = errorCode(err);
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return fail('timeout', `${code} (${phase})`, { cause: err });
    }
    return fail('connection', `${code ?? 'connection failed'} (${phase})`, { cause: err });
  };

  let res: Dispatcher.ResponseData;
  try {
    res = await request(req.url, { method: 'GET', headers: { accept: 'application/json', ...req.headers }, signal, dispatcher: req.dispatcher });
  } catch (err) {
    stats.request(endpoint, 'error');
    return transportFailure(err, 'connecting or waiting for headers');
  }
  stats.request(endpoint, String(res.statusCode));

  if (res.statusCode < 200 || res.statusCode > 299) {
    const detail = await peekErrorDetail(res.body, signal);
    const reason: ApiErrorReason = res.statusCode === 401 || res.statusCode === 403 ? 'auth' : 'http';
    const what = reason === 'auth' ? 'the API key was rejected' : 'unexpected status';
    return fail(reason, `HTTP ${res.statusCode}: ${what}${detail ? ` (${detail})` : ''}`, { status: res.statusCode });
  }

  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > req.maxResponseBytes) {
    res.body.destroy();
    return fail('too_large', `response of ${declared} bytes is over the cap of ${req.maxResponseBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > req.maxResponseBytes) {
        res.body.destroy();
        stats.responseBytes(endpoint, bytes);
        return fail('too_large', `response is over the cap of ${req.maxResponseBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    stats.responseBytes(endpoint, bytes);
    return transportFailure(err, `reading the body after ${bytes} bytes`);
  }
  stats.responseBytes(endpoint, bytes);

  const text = Buffer.concat(chunks, bytes).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    // V8's message quotes a piece of the body; keep only where it failed.
    const at = /position (\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
    return fail('invalid_json', `body of ${bytes} bytes is not valid JSON${at ? ` (at position ${at})` : ''}`);
  }
}

/** Replaces every occurrence of each secret in a text. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('<redacted>');
  return out;
}

/** The upstream's own words for an error status: `errors[0].title` and `.source.parameter`, short. */
async function peekErrorDetail(body: Dispatcher.ResponseData['body'], signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= ERROR_BODY_PEEK_BYTES || signal.aborted) break;
    }
  } catch {
    return '';
  } finally {
    body.destroy();
  }
  try {
    const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { errors?: unknown };
    const first = Array.isArray(doc.errors) ? (doc.errors[0] as Record<string, unknown> | undefined) : undefined;
    if (!first || typeof first !== 'object') return '';
    const title = typeof first.title === 'string' ? first.title : typeof first.code === 'string' ? first.code : '';
    const source = first.source as Record<string, unknown> | undefined;
    const parameter = source && typeof source.parameter === 'string' ? ` parameter ${source.parameter}` : '';
    return `${title}${parameter}`.slice(0, 200);
  } catch {
    return '';
  }
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** A copy of an error chain with secrets cut out of the messages (causes are logged by pino). */
function redactError(err: unknown, secrets: readonly string[]): unknown {
  if (!(err instanceof Error)) return undefined;
  const copy = new Error(redact(err.message, secrets));
  copy.name = err.name;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') (copy as Error & { code?: string }).code = code;
  return copy;
}
