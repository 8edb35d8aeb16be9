/**
 * The simulator's HTTP server (node:http, for byte-level control over broken answers): routing
 * of the two APIs, authentication (section 5), the request log and fault injection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { unauthorized } from './catena.js';
import { ApiError } from './errors.js';
import type { EventSinks } from './event-sinks.js';
import type { Fault, FaultController, FaultEndpoint } from './faults.js';
import { FlussonicRoutes, neededRight, type RouteResult } from './flussonic-routes.js';
import type { RequestLog } from './request-log.js';
import type { Rng } from './rng.js';
import type { SimWorld } from './world.js';

export const API_PREFIXES = ['/streamer/api/v3', '/flussonic/api/v3'] as const;
export const OPERATIONS_PATH = '/tv-management/api/v1/operations';
const MAX_BODY = 1024 * 1024;

export interface Credentials {
  readonly user: string;
  readonly password: string;
}

export interface HttpDeps {
  readonly world: SimWorld;
  readonly sinks: EventSinks;
  readonly faults: FaultController;
  readonly requests: RequestLog;
  readonly viewAuth?: Credentials;
  readonly editAuth?: Credentials;
  /** Bring the world up to date before answering (real clock). */
  sync(): void;
  now(): number;
  readonly rng: Rng;
}

interface Parsed {
  area: 'flussonic' | 'catena' | 'none';
  prefix: string;
  apiPath: string;
  segments: string[];
  query: URLSearchParams;
  path: string;
}

export class SimulatorHttp {
  readonly server: Server;
  private readonly routes: Map<string, FlussonicRoutes>;
  private readonly pending = new Set<{ timer: NodeJS.Timeout; done: () => void }>();
  private readonly hung = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private closed = false;

  constructor(private readonly deps: HttpDeps) {
    this.routes = new Map(API_PREFIXES.map((p) => [p, new FlussonicRoutes(deps.world, p, deps.sinks)]));
    // One idempotency store for both prefixes: they are the same server.
    const main = this.routes.get(API_PREFIXES[0])!;
    for (const p of API_PREFIXES) this.routes.set(p, main);
    this.server = createServer({ keepAlive: true }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) this.sendJson(res, 500, { errors: [{ status: '500', code: 'internal', title: err instanceof Error ? err.message : String(err) }] });
        else res.destroy();
      });
    });
    // Clients reuse idle connections (undici: until the Keep-Alive timeout the server announces);
    // 5 s (Node's default) let a client that paused a few seconds hit a socket closing under it.
    this.server.keepAliveTimeout = 65_000;
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /** Stop listening, release hung and delayed requests, drop keep-alive connections. */
  close(): Promise<void> {
    this.closed = true;
    for (const p of this.pending) {
      clearTimeout(p.timer);
      p.done();
    }
    this.pending.clear();
    for (const res of this.hung) res.destroy();
    this.hung.clear();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
      for (const s of this.sockets) s.destroy();
    });
  }

  private parse(rawUrl: string): Parsed {
    const q = rawUrl.indexOf('?');
    const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1));
    for (const prefix of API_PREFIXES) {
      if (path === prefix || path.startsWith(prefix + '/')) {
        const apiPath = path.slice(prefix.length) || '/';
        const segments = apiPath.split('/').filter((s) => s !== '');
        return { area: 'flussonic', prefix, apiPath, segments, query, path };
      }
    }
    if (path === OPERATIONS_PATH || path === OPERATIONS_PATH + '/') return { area: 'catena', prefix: '', apiPath: '/operations', segments: [], query, path };
    return { area: 'none', prefix: '', apiPath: path, segments: [], query, path };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const parsed = this.parse(req.url ?? '/');
    this.deps.requests.add({ method, path: parsed.path, apiPath: parsed.apiPath, query: Object.fromEntries(parsed.query), headers: req.headers, time: this.deps.now() });

    let segments: string[];
    try {
      // An identifier is one path segment; `/` inside it arrives as %2F.
      segments = parsed.segments.map((s) => decodeURIComponent(s));
    } catch {
      return this.sendError(res, new ApiError(400, [{ code: 'invalid_path', title: 'the path is not valid percent-encoding' }]));
    }
    const endpoint = faultEndpoint(parsed.area, segments);
    const configured = this.deps.faults.get(endpoint);
    // A fault limited to continuation pages leaves the first page of a walk alone.
    const fault = configured.afterFirstPage && !parsed.query.has('cursor') ? {} : configured;

    if (fault.latencyMs) {
      await this.delay(fault.latencyMs);
      if (this.closed) return void res.destroy();
    }
    if (fault.hang) {
      this.hung.add(res);
      res.on('close', () => this.hung.delete(res));
      req.resume();
      return;
    }

    let body: unknown;
    try {
      body = await readJsonBody(req);
    } catch (e) {
      return this.sendError(res, e instanceof ApiError ? e : new ApiError(400, [{ code: 'invalid_body', title: String(e) }]));
    }

    if (fault.authReject) return this.sendError(res, this.authError(parsed.area));
    if (fault.status !== undefined) {
      return this.sendError(res, new ApiError(fault.status, [{ code: 'injected_fault', title: `injected status ${fault.status}` }]));
    }
    if (fault.errorRate !== undefined && fault.errorRate > 0 && this.deps.rng.next() < fault.errorRate) {
      const status = [500, 502, 503][this.deps.rng.int(0, 2)] as number;
      return this.sendError(res, new ApiError(status, [{ code: 'injected_fault', title: `injected ${status}` }]));
    }

    this.deps.sync();
    let result: RouteResult;
    try {
      if (parsed.area === 'none') throw new ApiError(404, [{ code: 'not_found', title: `no such path: ${parsed.path}` }]);
      if (parsed.area === 'catena') {
        result = this.operations(method, req.headers['x-auth-token'], parsed.query);
      } else {
        this.authorize(req.headers.authorization, neededRight(method));
        result = this.routes.get(parsed.prefix)!.handle({ method, segments, query: parsed.query, headers: req.headers, body });
      }
    } catch (e) {
      if (e instanceof ApiError) return this.sendError(res, e);
      throw e;
    }
    this.sendResult(res, result, fault, parsed.query.get('cursor'));
  }

  private operations(method: string, tokenHeader: string | string[] | undefined, query: URLSearchParams): RouteResult {
    const token = Array.isArray(tokenHeader) ? tokenHeader[0] : tokenHeader;
    const portal = token === undefined ? undefined : this.deps.world.catena.keys.get(token);
    if (portal === undefined) throw unauthorized();
    if (method !== 'GET') throw new ApiError(405, [{ code: 'method_not_allowed', title: 'allowed: GET' }], { allow: 'GET' });
    return { status: 200, body: this.deps.world.catenaQuery(portal, query) };
  }

  /** Section 5: Basic or Bearer (base64 of user:password); read rights for GET, edit for changes. */
  private authorize(header: string | undefined, right: 'view' | 'edit'): void {
    const { viewAuth, editAuth } = this.deps;
    if (!viewAuth && !editAuth) return;
    const given = parseAuthorization(header);
    const isEdit = given !== undefined && editAuth !== undefined && sameCredentials(given, editAuth);
    const isView = given !== undefined && viewAuth !== undefined && sameCredentials(given, viewAuth);
    if (right === 'view') {
      if (isEdit || isView) return;
      throw this.authError('flussonic');
    }
    if (isEdit || (editAuth === undefined && isView)) return;
    if (isView) throw new ApiError(403, [{ code: 'forbidden', title: 'these credentials may read but not change (edit_auth needed)' }]);
    throw this.authError('flussonic');
  }

  private authError(area: Parsed['area']): ApiError {
    if (area === 'catena') return unauthorized();
    return new ApiError(401, [{ code: 'unauthorized', title: 'missing or wrong credentials' }], { 'www-authenticate': 'Basic realm="Flussonic"' });
  }

  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.pending.delete(entry);
          resolve();
        }, ms),
        done: resolve,
      };
      this.pending.add(entry);
    });
  }

  private sendError(res: ServerResponse, error: ApiError): void {
    this.sendJson(res, error.status, error.body(), error.headers);
  }

  private sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  private sendResult(res: ServerResponse, result: RouteResult, fault: Fault, requestCursor: string | null): void {
    if (result.body === undefined) {
      res.writeHead(result.status, { ...result.headers });
      res.end();
      return;
    }
    let body = result.body;
    if (fault.repeatCursor && requestCursor && typeof body === 'object' && body !== null && 'next' in body) {
      // The page is right but its `next` points back at itself: a walk must notice the loop.
      body = { ...(body as Record<string, unknown>), next: requestCursor };
    }
    let text = JSON.stringify(body);
    if (fault.malformedJson) text = '{,' + text.slice(1);
    const headers = { 'content-type': 'application/json', ...result.headers };
    if (fault.truncateBody) {
      const bytes = Buffer.from(text);
      res.writeHead(result.status, { ...headers, 'content-length': bytes.length });
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
      return;
    }
    if (fault.oversizedBytes !== undefined && fault.oversizedBytes > 0) {
      res.writeHead(result.status, headers);
      this.streamPadded(res, text, fault.oversizedBytes);
      return;
    }
    res.writeHead(result.status, { ...headers, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  /** Send the JSON, then whitespace until `total` bytes, chunked, honouring backpressure. */
  private streamPadded(res: ServerResponse, text: string, total: number): void {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = Buffer.byteLength(text);
    res.write(text);
    const pump = () => {
      while (sent < total && !res.destroyed) {
        const n = Math.min(chunk.length, total - sent);
        sent += n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  }
}

function faultEndpoint(area: Parsed['area'], segments: readonly string[]): FaultEndpoint | undefined {
  if (area === 'catena') return '/operations';
  if (area !== 'flussonic') return undefined;
  const [head, second] = segments;
  switch (head) {
    case 'streams':
      return '/streams';
    case 'sessions':
      return '/sessions';
    case 'dvrs':
      return '/dvrs';
    case 'schema':
      return '/schema';
    case 'config':
      return second === 'stats' ? '/config/stats' : undefined;
    case 'cluster':
      return second === 'peers' ? '/cluster/peers' : undefined;
    default:
      return undefined;
  }
}

export function parseAuthorization(header: string | undefined): Credentials | undefined {
  if (!header) return undefined;
  const match = /^(Basic|Bearer)\s+(\S+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[2] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function sameCredentials(a: Credentials, b: Credentials): boolean {
  const x = Buffer.from(`${a.user}\u0000${a.password}`);
  const y = Buffer.from(`${b.user}\u0000${b.password}`);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, [{ code: 'too_large', title: `request body over ${MAX_BODY} bytes` }]);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  const type = req.headers['content-type'];
  if (type !== undefined && !/json/i.test(type)) throw new ApiError(415, [{ code: 'unsupported_media_type', title: `send JSON (application/json), not ${type}` }]);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (e) {
    throw new ApiError(400, [{ code: 'invalid_json', title: `the body is not JSON: ${e instanceof Error ? e.message : String(e)}`, source: { pointer: '' } }]);
  }
}
