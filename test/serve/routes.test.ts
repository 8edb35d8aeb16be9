/**
 * The route table is the one list: fastify serves its routes, the 405 answers and their Allow
 * header, the paths `metrics_path` may not take and the landing page's lines all follow it, so a
 * route added to the table shows up in each of them, and fleet routes exist only with a fleet.
 */
import { describe, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { metricsPathProblem, validateConfig } from '../../src/config/index.js';
import type { FleetView } from '../../src/fleet/fleet.js';
import type { GuardOptions } from '../../src/serve/guards.js';
import { FIXED_ROUTE_PATHS, fixedRoutePaths, ROUTE_TABLE, servedRoutes, type RouteDeclaration } from '../../src/serve/routes.js';
import { NO_WEB_CONFIG, type WebConfig } from '../../src/serve/web-config.js';
import { testAppDeps, testApps } from '../helpers/app.js';

const FLEET: FleetView = { shard: { shard: 0, totalShards: 1 }, owned: () => [], shardOf: () => 0, describe: () => 'not sharded (one replica): polling 0 of 0 servers' };

/** A route the exporter does not have: GET only, so its Allow differs from every other route's. */
const EXTRA: RouteDeclaration = {
  path: '/-/extra',
  methods: ['GET'],
  auth: 'web-config',
  landing: { title: 'Extra page' },
  handler: () => (_request, reply) => reply.code(200).send('extra\n'),
};

const build = testApps();
const deps = testAppDeps;

/** The exporter's app (buildApp) for a table. */
function app(table: readonly RouteDeclaration[], fleet?: FleetView, guards?: Omit<GuardOptions, 'routes'>): FastifyInstance {
  return build({ ...(fleet ? { fleet } : {}), ...(guards ? { guards } : {}) }, table).app;
}

function metricsPathRejected(path: string, reserved: readonly string[]): string | undefined {
  try {
    validateConfig({ metrics_path: path, servers: [{ name: 'a', url: 'http://h' }] }, { source: 't', baseDir: '/', reservedPaths: reserved });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the route table', () => {
  test('a route added to the table is served, answers 405 with its own methods, is reserved and is on the landing page', async () => {
    const table = [...ROUTE_TABLE, EXTRA];
    const served = app(table);
    expect((await served.inject({ method: 'GET', url: '/-/extra' })).body).toBe('extra\n');
    for (const method of ['HEAD', 'POST', 'DELETE'] as const) {
      const res = await served.inject({ method, url: '/-/extra/' });
      expect([res.statusCode, res.headers.allow], method).toEqual([405, 'GET']);
    }
    expect((await served.inject({ method: 'POST', url: '/metrics' })).headers.allow).toBe('GET, HEAD');

    expect(fixedRoutePaths(table)).toContain('/-/extra');
    expect(metricsPathRejected('/-/extra', fixedRoutePaths(table))).toMatch(/metrics_path: must be a path like \/metrics, other than .* \/-\/extra; got "\/-\/extra"/);
    expect(metricsPathRejected('/-/extra', FIXED_ROUTE_PATHS)).toBeUndefined();

    const page = (await served.inject({ method: 'GET', url: '/' })).body;
    expect(page).toContain('<li><a href="/-/extra">Extra page</a> (/-/extra)</li>');
    // Without it in the table, none of that.
    const plain = app(ROUTE_TABLE);
    expect((await plain.inject({ method: 'POST', url: '/-/extra' })).statusCode).toBe(404);
    expect((await plain.inject({ method: 'GET', url: '/' })).body).not.toContain('/-/extra');
  });

  test('every fixed path is refused as metrics_path, named in the message, and answers 405 when served', async () => {
    const served = app(ROUTE_TABLE, FLEET);
    expect(FIXED_ROUTE_PATHS.length).toBe(ROUTE_TABLE.length - 1);
    for (const path of FIXED_ROUTE_PATHS) {
      // `/` and `/events/:server` are no clean paths to begin with.
      const clean = /^(?:\/[\w.~-]+)+$/.test(path);
      expect(metricsPathRejected(path, FIXED_ROUTE_PATHS), path).toContain(clean ? `other than ${FIXED_ROUTE_PATHS.join(' ')}; got ${JSON.stringify(path)}` : 'must be a path like /metrics: "/" then segments');
      expect(metricsPathRejected(`${path}/`, FIXED_ROUTE_PATHS), `${path}/`).toContain('must be a path like /metrics');
      const res = await served.inject({ method: 'PUT', url: path });
      const allow = ROUTE_TABLE.find((r) => r.path === path)!.methods.join(', ');
      expect([res.statusCode, res.headers.allow], path).toEqual([405, allow]);
    }
  });

  test('metrics_path is refused exactly where the router would run another route, parametric ones included', async () => {
    const served = app([...ROUTE_TABLE, EXTRA], FLEET);
    await served.ready();
    const reserved = fixedRoutePaths([...ROUTE_TABLE, EXTRA]);
    const candidates = ['/events/edge-1', '/events/x.y', '/events/a/b', '/events', '/eventsx', '/probe', '/probe/x', '/sd', '/SD', '/-/ready', '/-/extra', '/-/extra/x', '/-/x', '/x/metrics', '/a'];
    for (const path of candidates) {
      // Every method of a route's path reaches a route (405 for the others): GET asks for any.
      const routed = served.findRoute({ method: 'GET', url: path }) !== null;
      expect([path, metricsPathRejected(path, reserved) !== undefined], path).toEqual([path, routed]);
    }
    expect(metricsPathRejected('/events/edge-1', reserved)).toContain('got "/events/edge-1", which the route /events/:server takes');
    // A route path this check could not match as the router does stops it, rather than letting a path through.
    for (const pattern of ['/files/*', '/a/:b-:c', '/a/:b(\\d+)']) expect(() => metricsPathProblem('/m', [pattern]), pattern).toThrow(/only static and whole-segment :name parts/);
  });

  test('the landing page has a line for every route that declares one, in table order', async () => {
    const page = (await app(ROUTE_TABLE, FLEET).inject({ method: 'GET', url: '/' })).body;
    const lines = servedRoutes(deps({ fleet: FLEET }))
      .filter((r) => r.landing)
      .map((r) => page.indexOf(r.landing!.query !== undefined ? `<code>${r.path}?` : `href="${r.path}"`));
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(lines.every((at) => at > 0)).toBe(true);
    expect([...lines].sort((a, b) => a - b)).toEqual(lines);
  });

  test('the fleet routes are served and listed only with a fleet view', async () => {
    const without = app(ROUTE_TABLE);
    expect((await without.inject({ method: 'GET', url: '/sd' })).statusCode).toBe(404);
    expect((await without.inject({ method: 'POST', url: '/probe' })).statusCode).toBe(404);
    expect((await without.inject({ method: 'GET', url: '/' })).body).not.toMatch(/\/sd|\/probe/);
    const withFleet = app(ROUTE_TABLE, FLEET);
    expect((await withFleet.inject({ method: 'GET', url: '/sd' })).body).toBe('[]');
    expect((await withFleet.inject({ method: 'GET', url: '/' })).body).toMatch(/href="\/sd".*\n.*<code>\/probe\?target=NAME<\/code>/);
  });

  test('a metrics path on a fixed route is refused when the app is built, naming the fixed paths', () => {
    expect(() => servedRoutes(deps({ metricsPath: '/-/ready' }))).toThrow(`two routes at "/-/ready": the metrics path must not be one of ${FIXED_ROUTE_PATHS.join(' ')}`);
    expect(() => servedRoutes(deps({ metricsPath: '/-/ready/' }))).toThrow('two routes at "/-/ready"');
  });

  test("basic auth guards every route but one the table declares open", async () => {
    const open: RouteDeclaration = { ...EXTRA, auth: 'none' };
    const users: WebConfig = { ...NO_WEB_CONFIG, users: new Map([['admin', '$2y$04$notarealhashnotarealhashnotarealhashnotarealhashnotre']]) };
    const served = app([...ROUTE_TABLE, open], undefined, { webConfig: () => users, maxRequests: 5 });
    expect((await served.inject({ method: 'GET', url: '/-/extra' })).statusCode).toBe(200);
    for (const url of ['/metrics', '/', '/-/healthy', '/nope']) expect((await served.inject({ method: 'GET', url })).statusCode, url).toBe(401);
  });
});
