/**
 * What every request goes through before its route, in one global onRequest hook, decided by the
 * route table's entries (routes.ts): the web config's extra headers, basic auth (on every path a
 * route does not declare open, unknown ones too; 429 when too many checks are under way), 405 with the route's methods as Allow for any
 * other method on a known path (Fastify would answer 404 for a method it has no route for), and
 * the cap of concurrent requests on the routes that count against it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BASIC_CHALLENGE, BasicAuthChecker, parseBasicAuth, type ThrottleReason } from './basic-auth.js';
import type { RouteEntry } from './route-types.js';
import type { WebConfig } from './web-config.js';

export interface GuardOptions {
  /** The web config in force (read on every request: reloads apply at once). */
  readonly webConfig: () => WebConfig;
  /** The routes served (from the route table). */
  readonly routes: readonly RouteEntry[];
  /** Concurrent requests of the capped routes (the metrics path); beyond it 503. */
  readonly maxRequests: number;
  /** Shared so tests can see its cache work; default a new one (its thread ends with the app). */
  readonly auth?: BasicAuthChecker;
  /** Told of every answer: the route's path (`other` off the table) and the status code. */
  readonly answered?: (path: string, code: number) => void;
  /** Hears of every request answered 429 because its auth check could not be queued. */
  readonly onAuthThrottled?: (reason: ThrottleReason) => void;
}

/** The path label of a request to no route of the table: one value, so the label stays bounded. */
export const OTHER_PATH = 'other';

export function installGuards(app: FastifyInstance, options: GuardOptions): void {
  const exact = new Map(options.routes.map((route) => [stripSlash(route.path), { ...route, allow: route.methods.join(', ') }]));
  // A route ending in one parameter (`/events/:server`) matches its prefix and one more segment.
  const prefixed = [...exact.values()].filter((r) => /\/:[A-Za-z]+$/.test(r.path)).map((r) => ({ prefix: r.path.slice(0, r.path.lastIndexOf(':')), route: r }));
  const known = {
    get(path: string) {
      const hit = exact.get(path);
      if (hit || prefixed.length === 0) return hit;
      for (const { prefix, route } of prefixed) if (path.length > prefix.length && path.startsWith(prefix) && !path.includes('/', prefix.length)) return route;
      return undefined;
    },
  };
  const auth = options.auth ?? new BasicAuthChecker();
  app.addHook('onClose', () => auth.close());
  let scrapes = 0;

  const answered = options.answered;
  if (answered) {
    app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
      answered(known.get(stripSlash(pathOf(request.url)))?.path ?? OTHER_PATH, reply.statusCode);
    });
  }

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const web = options.webConfig();
    for (const [name, value] of Object.entries(web.headers)) reply.header(name, value);
    const route = known.get(stripSlash(pathOf(request.url)));
    if (web.users.size > 0 && route?.auth !== 'none') {
      const credentials = parseBasicAuth(request.headers.authorization);
      const outcome = credentials ? await auth.verify(web.users, credentials) : 'denied';
      if (outcome === 'queue_full' || outcome === 'queue_timeout') {
        // Too many checks under way (a flood of guesses): refused fast, before any bcrypt work.
        options.onAuthThrottled?.(outcome);
        return reply.code(429).header('retry-after', '1').type('text/plain; charset=utf-8').send('too many authentication attempts in progress\n');
      }
      // One answer for a missing header, an unknown user and a wrong password.
      if (outcome !== 'ok') {
        return reply.code(401).header('www-authenticate', BASIC_CHALLENGE).type('text/plain; charset=utf-8').send('Unauthorized\n');
      }
    }
    if (!route) return;
    if (!(route.methods as readonly string[]).includes(request.method)) {
      return reply.code(405).header('allow', route.allow).type('text/plain; charset=utf-8').send('method not allowed\n');
    }
    if (route.scrapeCap) {
      if (scrapes >= options.maxRequests) {
        return reply.code(503).header('retry-after', '1').type('text/plain; charset=utf-8').send(`too many concurrent scrapes (limit ${options.maxRequests})\n`);
      }
      scrapes += 1;
      reply.raw.once('close', () => {
        scrapes -= 1;
      });
    }
  });
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** `ignoreTrailingSlash` serves `/metrics/` as `/metrics`. */
function stripSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
