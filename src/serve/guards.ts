/**
 * What every request goes through before its route, in one global onRequest hook so that every
 * route gets it, present and future: the web config's extra headers, basic auth, 405 for methods
 * other than GET/HEAD on known paths (Fastify would answer 404 for a method it has no route for),
 * and the cap of concurrent scrapes of the metrics path.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BasicAuthChecker, parseBasicAuth } from './basic-auth.js';
import type { WebConfig } from './web-config.js';

export interface GuardOptions {
  /** The web config in force (read on every request: reloads apply at once). */
  readonly webConfig: () => WebConfig;
  readonly metricsPath: string;
  /** Concurrent requests of the metrics path; beyond it 503. */
  readonly maxRequests: number;
  /** Shared so tests can see its cache work; default a new one. */
  readonly auth?: BasicAuthChecker;
}

/** Must be called before the routes are added: it learns the known paths from them. */
export function installGuards(app: FastifyInstance, options: GuardOptions): void {
  const known = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) known.add(stripSlash(route.url ?? route.path));
  });
  const auth = options.auth ?? new BasicAuthChecker();
  let scrapes = 0;

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const web = options.webConfig();
    for (const [name, value] of Object.entries(web.headers)) reply.header(name, value);
    if (web.users.size > 0) {
      const credentials = parseBasicAuth(request.headers.authorization);
      // One answer for a missing header, an unknown user and a wrong password.
      if (!credentials || !(await auth.check(web.users, credentials))) {
        return reply.code(401).header('www-authenticate', 'Basic').type('text/plain; charset=utf-8').send('Unauthorized\n');
      }
    }
    const path = stripSlash(pathOf(request.url));
    if (!known.has(path)) return;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return reply.code(405).header('allow', 'GET, HEAD').type('text/plain; charset=utf-8').send('method not allowed\n');
    }
    if (path === stripSlash(options.metricsPath)) {
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
