/**
 * The shapes of the route table (routes.ts) and of what its handlers are built from, apart from
 * the table so that the handler modules and the guards can name them without importing it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ExpositionCache } from './exposition.js';
import type { SelfMetrics } from './self.js';
import type { TargetStatus } from '../poll/poller.js';
import type { FleetView } from '../fleet/fleet.js';
import type { EventsReceiver } from '../events/receiver.js';

export type RouteMethod = 'GET' | 'HEAD' | 'POST';

/** `web-config`: the web config's users must authenticate (when it has any); `none`: open. */
export type RouteAuth = 'web-config' | 'none';

/**
 * As the route table declares it: `health` is `none` with --web.health-without-auth (the health
 * endpoints for kubelet probes, which cannot send the users' passwords), `web-config` otherwise.
 */
export type DeclaredAuth = RouteAuth | 'health';

export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => FastifyReply | Promise<FastifyReply>;

/** What the landing page says of a route. */
export interface LandingLine {
  readonly title: string;
  /** A query the route needs (`target=NAME`): the path is shown with it, not linked. */
  readonly query?: string;
}

/** A route as served: its path resolved, without its handler (what the guards and the landing page read). */
export interface RouteEntry {
  readonly path: string;
  readonly methods: readonly RouteMethod[];
  readonly auth: RouteAuth;
  /** Counted against --web.max-requests (503 beyond it). */
  readonly scrapeCap: boolean;
  /** Absent: the landing page does not list it. */
  readonly landing?: LandingLine;
}

export interface ServedRoute extends RouteEntry {
  readonly handler: RouteHandler;
  /** A route that reads its body itself (the event sink, POST /-/reload): see RawBodyRoute. */
  readonly raw?: RawBodyRoute;
}

/**
 * A route whose body is read as text (any content type) up to `limit` bytes; `before` runs
 * before the body is read and may answer (auth); `failed` answers a body over the limit (413)
 * or unreadable (400).
 */
export interface RawBodyRoute {
  readonly limit: number;
  readonly before: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;
  readonly failed: (request: FastifyRequest, reply: FastifyReply, code: 400 | 413) => FastifyReply;
}

/** What the handlers are built from. */
export interface RouteDeps {
  readonly version: string;
  readonly metricsPath: string;
  readonly exposition: ExpositionCache;
  readonly self: SelfMetrics;
  /** The targets and their last poll, for the landing page. */
  readonly statuses: () => readonly TargetStatus[];
  /** Whether every target finished its first poll attempt. */
  readonly ready: () => boolean;
  /** Owned targets and shard, for the fleet routes and the landing page (absent: no fleet routes). */
  readonly fleet?: FleetView;
  /** HOST:PORT /sd lists as this replica's address (--web.external-address); absent: the connection's local address. */
  readonly externalAddress?: string;
  /** Demo mode: the landing page says the data is simulated. */
  readonly demo?: boolean;
  /** --web.health-without-auth: /-/healthy and /-/ready answer without basic auth. */
  readonly healthWithoutAuth?: boolean;
  /** The event sink receiver (events.enabled); absent: no /events route. */
  readonly events?: EventsReceiver;
  /** The lifecycle API (POST /-/reload); absent or not enabled: 403, as Prometheus answers. */
  readonly lifecycle?: LifecycleDeps;
}

/** What POST /-/reload runs: the reload SIGHUP runs (src/lifecycle.ts). */
export interface LifecycleDeps {
  /** --web.enable-lifecycle was given. */
  readonly enabled: boolean;
  /** Re-reads the config and the web config; `error` is a one-line reason, never a secret. */
  readonly reload: () => ReloadOutcome;
}

export type ReloadOutcome = { readonly ok: true } | { readonly ok: false; readonly error: string };
