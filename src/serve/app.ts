/**
 * The exporter's HTTP face, a fastify instance that never listens by itself (main.ts listens;
 * tests use app.inject()). Its routes are the route table's (routes.ts): each is registered with
 * its methods, and guards.ts, in front of every request, answers from the same entries (web
 * config headers, basic auth, 405, the cap of concurrent scrapes); 404 with a short body elsewhere.
 * Fastify logs through a child of the exporter's logger at warn level: no line per request, and no
 * logger made per request.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { MAX_NAME_LENGTH } from '../config/bounds.js';
import { THROTTLE_REASONS, type ThrottleReason } from './basic-auth.js';
import { installGuards, type GuardOptions, type RefuseUnroutable } from './guards.js';
import { DEFAULT_LIMITS } from './limits.js';
import type { RawBodyRoute, RouteDeps, ServedRoute } from './route-types.js';
import { ROUTE_TABLE, servedRoutes, type RouteDeclaration } from './routes.js';
import { NO_WEB_CONFIG } from './web-config.js';
import { plainAnswer } from './plain-answer.js';

export interface AppDeps extends RouteDeps {
  readonly logger: Logger;
  /** Web config (TLS is the listeners'; headers and auth are applied here) and the scrape cap. Default: none, 40. */
  readonly guards?: Omit<GuardOptions, 'routes'>;
}

const AUTH_THROTTLED = 'flussonic_exporter_http_auth_throttled_total';

/** `table`: the route table served (another one only in tests). */
export function buildApp(deps: AppDeps, table: readonly RouteDeclaration[] = ROUTE_TABLE): FastifyInstance {
  let refuse: RefuseUnroutable | undefined;
  const app = Fastify({
    loggerInstance: deps.logger.child({ component: 'http' }, { level: 'warn' }) as FastifyBaseLogger,
    // Requests log through that logger itself: a child per request (fastify's default, to bind
    // its id) copies the bindings through the redaction on every scrape, for lines never written.
    childLoggerFactory: (logger) => logger,
    // The metrics path is served as configured, also with a trailing slash. The route parameter
    // of /events/<server> is any server name: the router measures it percent-decoded, in UTF-16
    // code units, as the name's bound does (a longer one is answered 414 before any route).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_NAME_LENGTH },
    return503OnClosing: true,
    // A URL the router cannot take (a malformed percent-encoding): answered by the guards, not by
    // fastify's JSON that echoes the URL.
    frameworkErrors: (error, request, reply) => refuse!(error, request, reply),
  });
  for (const reason of THROTTLE_REASONS) deps.self.incCounter(AUTH_THROTTLED, { reason }, 0);
  const onAuthThrottled = (reason: ThrottleReason): void => deps.self.incCounter(AUTH_THROTTLED, { reason }, 1);
  // Every answer is counted (flussonic_exporter_http_requests_total), refusals included.
  const answered = (path: string, code: number): void => deps.self.httpRequest(path, code);
  refuse = addRoutes(app, servedRoutes(deps, table), { webConfig: () => NO_WEB_CONFIG, maxRequests: DEFAULT_LIMITS.maxRequests, onAuthThrottled, answered, ...deps.guards });
  return app;
}

/**
 * Serves `routes` on `app` behind the guards, with short 404 and error answers; returns what the
 * app's `frameworkErrors` calls (the guards' answer to a URL the router cannot take).
 */
export function addRoutes(app: FastifyInstance, routes: readonly ServedRoute[], guards?: Partial<Omit<GuardOptions, 'routes'>>): RefuseUnroutable {
  const refuse = installGuards(app, { webConfig: () => NO_WEB_CONFIG, maxRequests: DEFAULT_LIMITS.maxRequests, ...guards, routes });
  for (const route of routes) {
    if (route.raw) addRawBodyRoute(app, route, route.raw);
    else app.route({ method: [...route.methods], url: route.path, handler: route.handler });
  }

  app.setNotFoundHandler((_request, reply) => plainAnswer(reply, 404, 'not found\n'));
  app.setErrorHandler((error, _request, reply) => {
    const given = (error as { statusCode?: unknown }).statusCode;
    const status = typeof given === 'number' && given >= 400 && given < 600 ? given : 500;
    // A client's mistake (a body that does not parse, too big) is answered and counted, not logged:
    // anyone who can reach the port could fill the log. Log the error, not the request: URLs and
    // headers stay out of the logs.
    if (status >= 500) app.log.error({ err: error }, 'request failed');
    return plainAnswer(reply, status, status < 500 ? 'bad request\n' : 'internal error\n');
  });
  return refuse;
}

/**
 * A route that reads its body as text in a scope of its own (its parser and error handler do not
 * reach the other routes): `before` runs before the body is read, errors while reading it are
 * answered by `failed` and never logged (the URL may carry a token); an error of the handler
 * itself goes on to the app's error handler.
 */
function addRawBodyRoute(app: FastifyInstance, route: ServedRoute, raw: RawBodyRoute): void {
  const handling = new WeakSet<FastifyRequest>();
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: raw.limit }, (_request, body, done) => done(null, body));
    scope.setErrorHandler((error, request, reply) => {
      if (handling.has(request)) throw error;
      const status = (error as { statusCode?: unknown }).statusCode;
      return raw.failed(request, reply, status === 413 ? 413 : 400);
    });
    scope.route({
      method: [...route.methods],
      url: route.path,
      bodyLimit: raw.limit,
      onRequest: async (request, reply) => {
        // An answer from `before` ends the request here, before its body is read.
        if (raw.before(request, reply) !== undefined) return reply;
        return undefined;
      },
      handler: (request, reply) => {
        handling.add(request);
        return route.handler(request, reply);
      },
    });
  });
}
