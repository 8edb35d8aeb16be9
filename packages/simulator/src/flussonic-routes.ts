/**
 * Area A endpoints below /streamer/api/v3 (and its alias /flussonic/api/v3): collections with the
 * query language, single streams with upsert/delete/create, sessions, server stats, DVRs, schema.
 */
import { ApiError, notFound } from './errors.js';
import { needsOnlySortKeys, parseQuery, project, parseSelect, runQuery, type CollectionSpec, type JsonRecord, type QueryCache } from './query.js';
import { EVENT_SINKS_OPENAPI, type EventSinks } from './event-sinks.js';
import { openApiDocument } from './schema.js';
import { DVRS_SPEC, PEERS_SPEC, SESSIONS_SPEC, STREAMS_SPEC, type SimWorld } from './world.js';

export interface RouteRequest {
  readonly method: string;
  /** Decoded path segments below the API prefix (`['streams', 'sport/hd/match-1']`). */
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Parsed JSON body (undefined when there was none). */
  readonly body: unknown;
}

export interface RouteResult {
  readonly status: number;
  /** Serialised as JSON; undefined = empty body. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Which right a request needs (section 5): reads need view, changes need edit. */
export function neededRight(method: string): 'view' | 'edit' {
  return method === 'GET' || method === 'HEAD' ? 'view' : 'edit';
}

const STREAMS_DEFAULT_ORDER = 'named_by,position,name';
const EVENT_SINKS_SPEC: CollectionSpec = { name: 'event_sinks', implicitSort: ['name'], defaultLimit: 100 };

const methodNotAllowed = (allowed: string) => new ApiError(405, [{ code: 'method_not_allowed', title: `allowed: ${allowed}` }], { allow: allowed });

export class FlussonicRoutes {
  /** Idempotency-Key -> the first response, replayed for repeats (section 4.5). */
  private readonly idempotent = new Map<string, RouteResult>();
  private readonly caches = new Map<string, { version: number; results: Map<string, readonly unknown[]> }>();

  constructor(
    private readonly world: SimWorld,
    private readonly apiPrefix: string,
    private readonly sinks: EventSinks,
  ) {}

  handle(req: RouteRequest): RouteResult {
    const [head, ...rest] = req.segments;
    const world = this.world;
    switch (head) {
      case 'streams':
        if (rest.length === 0) {
          if (req.method === 'GET') return this.streams(req);
          if (req.method === 'POST') return this.createStream(req);
          throw methodNotAllowed('GET, POST');
        }
        if (rest.length === 1) return this.stream(rest[0] as string, req);
        break;
      case 'sessions':
        if (rest.length === 0) {
          if (req.method !== 'GET') throw methodNotAllowed('GET');
          return this.collection(world.sessionDocs(), req, SESSIONS_SPEC, 'id');
        }
        if (rest.length === 1) {
          if (req.method !== 'GET') throw methodNotAllowed('GET');
          const session = world.sessionDocs().find((s) => s.id === rest[0]);
          if (!session) throw notFound('session', rest[0] as string);
          return { status: 200, body: selected(session, req.query) };
        }
        break;
      case 'config':
        if (rest.length === 1 && rest[0] === 'stats') {
          if (req.method !== 'GET') throw methodNotAllowed('GET');
          return { status: 200, body: world.serverStats() };
        }
        break;
      case 'dvrs':
        if (req.method !== 'GET') throw methodNotAllowed('GET');
        if (rest.length === 0) return this.collection(world.dvrDocs(), req, DVRS_SPEC, 'name');
        if (rest.length === 1) {
          const dvr = world.dvrDocs().find((d) => d.name === rest[0]);
          if (!dvr) throw notFound('dvr', rest[0] as string);
          return { status: 200, body: selected(dvr, req.query) };
        }
        break;
      case 'cluster':
        if (rest.length === 1 && rest[0] === 'peers') {
          if (req.method !== 'GET') throw methodNotAllowed('GET');
          // Simulated time, so a manual clock decides staleness too.
          return this.collection(world.cluster.docs(world.now), req, PEERS_SPEC, 'hostname');
        }
        break;
      case 'event_sinks':
        if (rest.length === 0) {
          if (req.method !== 'GET') throw methodNotAllowed('GET');
          // No query cache: sinks change without the world's version moving.
          const page = runQuery(this.sinks.list(), parseQuery(req.query, EVENT_SINKS_SPEC), EVENT_SINKS_SPEC, 'name');
          return { status: 200, body: { event_sinks: page.items, estimated_count: page.estimated_count, next: page.next, prev: page.prev, timing: page.timing } };
        }
        if (rest.length === 1) return this.eventSink(rest[0] as string, req);
        break;
      case 'schema':
        if (rest.length === 0) {
          if (req.method !== 'GET') throw methodNotAllowed('GET');
          return { status: 200, body: openApiDocument(`${world.shape === 'flat' ? '24.12' : '25.11'}-sim`, [EVENT_SINKS_OPENAPI]) };
        }
        break;
    }
    throw new ApiError(404, [{ code: 'not_found', title: `no such endpoint: /${req.segments.map(encodeURIComponent).join('/')}` }]);
  }

  /** Streams: a default-order walk builds only the documents of its page (10,000 are costly). */
  private streams(req: RouteRequest): RouteResult {
    const query = parseQuery(req.query, STREAMS_SPEC);
    const world = this.world;
    const page = needsOnlySortKeys(query, STREAMS_DEFAULT_ORDER)
      ? runQuery(world.streamKeys(), query, STREAMS_SPEC, STREAMS_DEFAULT_ORDER, undefined, (keys) => keys.map((k) => world.streams.get((k as { name: string }).name)))
      : runQuery(world.streamDocs(), query, STREAMS_SPEC, STREAMS_DEFAULT_ORDER, this.cacheFor('streams'));
    return { status: 200, body: { streams: page.items, estimated_count: page.estimated_count, next: page.next, prev: page.prev, timing: page.timing } };
  }

  private collection(items: readonly unknown[], req: RouteRequest, spec: typeof STREAMS_SPEC, presortedBy: string): RouteResult {
    const query = parseQuery(req.query, spec);
    const page = runQuery(items, query, spec, presortedBy, this.cacheFor(spec.name));
    return { status: 200, body: { [spec.name]: page.items, estimated_count: page.estimated_count, next: page.next, prev: page.prev, timing: page.timing } };
  }

  private stream(name: string, req: RouteRequest): RouteResult {
    const world = this.world;
    switch (req.method) {
      case 'GET': {
        const doc = world.streams.get(name);
        if (!doc) throw notFound('stream', name);
        return { status: 200, body: selected(doc, req.query) };
      }
      case 'PUT': {
        if (req.body === undefined) throw new ApiError(400, [{ code: 'invalid_json', title: 'PUT needs a JSON body', source: { pointer: '' } }]);
        const { created, stream } = world.streams.put(name, req.body);
        return { status: created ? 201 : 200, body: stream, headers: created ? { location: this.location(name) } : {} };
      }
      case 'DELETE':
        // Idempotent: deleting an absent stream is the same success.
        world.streams.delete(name);
        return { status: 204 };
      default:
        throw methodNotAllowed('GET, PUT, DELETE');
    }
  }

  private eventSink(name: string, req: RouteRequest): RouteResult {
    switch (req.method) {
      case 'GET': {
        const config = this.sinks.get(name);
        if (!config) throw notFound('event_sink', name);
        return { status: 200, body: selected(config, req.query) };
      }
      case 'PUT':
        if (req.body === undefined) throw new ApiError(400, [{ code: 'invalid_json', title: 'PUT needs a JSON body', source: { pointer: '' } }]);
        return { status: 200, body: this.sinks.put(name, req.body) };
      case 'DELETE':
        this.sinks.delete(name);
        return { status: 204 };
      default:
        throw methodNotAllowed('GET, PUT, DELETE');
    }
  }

  private createStream(req: RouteRequest): RouteResult {
    const keyHeader = req.headers['idempotency-key'];
    const key = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;
    if (key !== undefined) {
      if (key === '' || key.length > 255) throw new ApiError(400, [{ code: 'invalid_header', title: 'Idempotency-Key must have 1 to 255 characters', meta: { header: 'Idempotency-Key' } }]);
      const first = this.idempotent.get(key);
      if (first) return { ...first, headers: { ...first.headers, 'idempotent-replayed': 'true' } };
    }
    const result = this.createStreamOnce(req.body ?? {});
    if (key !== undefined) this.idempotent.set(key, result);
    return result;
  }

  private createStreamOnce(body: unknown): RouteResult {
    const world = this.world;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ApiError(400, [{ code: 'invalid_value', title: 'the body must be a JSON object (a stream)', source: { pointer: '' } }]);
    }
    const requested = (body as JsonRecord).name;
    if (requested !== undefined && (typeof requested !== 'string' || requested === '')) {
      throw new ApiError(400, [{ code: 'invalid_value', title: '/name must be a non-empty string', source: { pointer: '/name' } }]);
    }
    const name = typeof requested === 'string' ? requested : world.generatedName();
    if (world.hasStream(name)) {
      throw new ApiError(409, [{ code: 'already_exists', title: `stream ${name} already exists; change it with PUT /streams/${encodeURIComponent(name)}`, source: { pointer: '/name' }, meta: { name } }]);
    }
    const { stream } = world.streams.put(name, body);
    return { status: 201, body: stream, headers: { location: this.location(name) } };
  }

  /** A query cache per collection, emptied whenever the world changed (time moved, a mutation). */
  private cacheFor(collection: string): QueryCache {
    const version = this.world.version;
    let entry = this.caches.get(collection);
    if (!entry || entry.version !== version) this.caches.set(collection, (entry = { version, results: new Map() }));
    const results = entry.results;
    return {
      get: (key) => results.get(key),
      set: (key, ordered) => {
        if (results.size >= 8) results.delete(results.keys().next().value as string);
        results.set(key, ordered);
      },
    };
  }

  private location(name: string): string {
    return `${this.apiPrefix}/streams/${encodeURIComponent(name)}`;
  }
}

function selected(doc: JsonRecord, query: URLSearchParams): unknown {
  const raw = query.get('select');
  return raw ? project(doc, parseSelect(raw)) : doc;
}
