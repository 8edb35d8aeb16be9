/**
 * Every route of the HTTP face, declared once: path, methods, auth, whether it counts against the
 * scrape cap, what the landing page says of it, and its handler. From this list come the fastify
 * registration (app.ts), the 405 answers and their Allow header, auth and the scrape cap
 * (guards.ts), the landing page's lines (landing.ts) and the paths `metrics_path` may not take
 * (FIXED_ROUTE_PATHS, handed to config validation by its callers).
 */
import { probeHandler, sdHandler, type FleetPaths, type FleetRouteDeps } from './fleet-routes.js';
import { healthyHandler, metricsHandler, readyHandler, reloadBody, reloadHandler } from './handlers.js';
import { landingHandler } from './landing.js';
import { EVENTS_PATH, eventsHandler, eventsRawBody } from './events-route.js';
import type { DeclaredAuth, LandingLine, RawBodyRoute, RouteAuth, RouteDeps, RouteEntry, RouteHandler, RouteMethod, ServedRoute } from './route-types.js';

export interface RouteDeclaration {
  /** A fixed path, or one taken from the deps (the configured metrics path). */
  readonly path: string | ((deps: RouteDeps) => string);
  readonly methods: readonly RouteMethod[];
  readonly auth: DeclaredAuth;
  readonly scrapeCap?: boolean;
  readonly landing?: LandingLine;
  /** `fleet`: served only with a fleet view. */
  readonly needs?: 'fleet';
  /** The route reads its body as text, whatever its content type, within a limit (RawBodyRoute). */
  readonly raw?: (deps: RouteDeps) => RawBodyRoute;
  /** `routes`: every route served, in table order (for the landing page). */
  readonly handler: (deps: RouteDeps, routes: readonly RouteEntry[]) => RouteHandler;
}

const READ: readonly RouteMethod[] = ['GET', 'HEAD'];
export const HEALTHY_PATH = '/-/healthy';
export const READY_PATH = '/-/ready';
export const RELOAD_PATH = '/-/reload';
const FLEET: FleetPaths = { probe: '/probe', sd: '/sd' };

export const ROUTE_TABLE: readonly RouteDeclaration[] = [
  { path: (deps) => deps.metricsPath, methods: READ, auth: 'web-config', scrapeCap: true, landing: { title: 'Metrics' }, handler: metricsHandler },
  { path: '/', methods: READ, auth: 'web-config', handler: landingHandler },
  { path: HEALTHY_PATH, methods: READ, auth: 'health', landing: { title: 'Health' }, handler: healthyHandler },
  { path: READY_PATH, methods: READ, auth: 'health', landing: { title: 'Readiness' }, handler: readyHandler },
  // Its body is read (within a cap) and ignored, whatever its content type, as Prometheus ignores it.
  { path: RELOAD_PATH, methods: ['POST'], auth: 'web-config', raw: reloadBody, handler: reloadHandler },
  {
    path: FLEET.sd,
    methods: READ,
    auth: 'web-config',
    needs: 'fleet',
    landing: { title: 'The servers this replica polls, for Prometheus http_sd_configs' },
    handler: (deps) => sdHandler(withFleet(deps), FLEET),
  },
  {
    path: FLEET.probe,
    methods: READ,
    auth: 'web-config',
    needs: 'fleet',
    landing: { title: "One server's metrics", query: 'target=NAME' },
    handler: (deps) => probeHandler(withFleet(deps), FLEET),
  },
  // Authenticated by each server's events_secret (events-route.ts), not by the web config's users; 404 while events.enabled is off.
  { path: EVENTS_PATH, methods: ['POST'], auth: 'none', raw: (deps) => eventsRawBody(deps.events), handler: (deps) => eventsHandler(deps.events) },
];

/** The paths that are not configurable, in table order, fleet routes included (reserved also without a fleet). */
export function fixedRoutePaths(table: readonly RouteDeclaration[] = ROUTE_TABLE): string[] {
  return table.flatMap((r) => (typeof r.path === 'string' ? [r.path] : []));
}

/**
 * The routes `metrics_path` and --web.telemetry-path may not be taken by, parametric ones
 * (`/events/:server`) included: config validation takes them from its callers and matches them as
 * the router does (routePathMatches).
 */
export const FIXED_ROUTE_PATHS: readonly string[] = fixedRoutePaths();

function servedAuth(auth: DeclaredAuth, deps: RouteDeps): RouteAuth {
  if (auth !== 'health') return auth;
  return deps.healthWithoutAuth === true ? 'none' : 'web-config';
}

/** The routes served for these deps, in table order; throws when two resolve to one path. */
export function servedRoutes(deps: RouteDeps, table: readonly RouteDeclaration[] = ROUTE_TABLE): ServedRoute[] {
  const chosen = table.filter((r) => r.needs !== 'fleet' || deps.fleet !== undefined);
  const entries: RouteEntry[] = chosen.map((r) => ({
    path: typeof r.path === 'string' ? r.path : r.path(deps),
    methods: r.methods,
    auth: servedAuth(r.auth, deps),
    scrapeCap: r.scrapeCap ?? false,
    ...(r.landing ? { landing: r.landing } : {}),
  }));
  // Trailing slashes are ignored when routing: `/-/ready/` is `/-/ready`.
  const seen = new Set<string>();
  for (const { path } of entries) {
    const routed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    if (seen.has(routed)) throw new Error(`two routes at ${JSON.stringify(path)}: the metrics path must not be one of ${fixedRoutePaths(table).join(' ')}`);
    seen.add(routed);
  }
  return chosen.map((r, i) => ({ ...entries[i]!, handler: r.handler(deps, entries), ...(r.raw ? { raw: r.raw(deps) } : {}) }));
}

function withFleet(deps: RouteDeps): FleetRouteDeps {
  const { fleet } = deps;
  if (!fleet) throw new Error('a fleet route needs a fleet view');
  return { ...deps, fleet };
}
