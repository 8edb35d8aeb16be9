/**
 * What every request goes through before its route, in one global onRequest hook, decided by the
 * route table's entries (routes.ts) for the route fastify's router matched (request.routeOptions.url,
 * so `/metric%73`, `http://host/metrics` and `/metrics/` are `/metrics`): the web config's extra
 * headers, basic auth (on every path a route does not declare open, unknown ones too; 429 when too
 * many checks are under way), 405 with the route's methods as Allow for any other method on a
 * route's path, and the cap of concurrent requests on the routes that count against it.
 *
 * For the 405 answers to come from the router too, every method Node's parser takes is routed and
 * each route's path gets one more route, for the methods it does not declare. A request the router
 * cannot take (a malformed percent-encoding, a parameter over fastify's length limit) reaches no
 * hook: installGuards returns what fastify's `frameworkErrors` calls for it, the same guards (as
 * for a path of no route), then a short plain answer, counted as `other`.
 */
import { METHODS } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BASIC_CHALLENGE, BasicAuthChecker, parseBasicAuth, type ThrottleReason } from './basic-auth.js';
import { plainAnswer } from './plain-answer.js';
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

/** fastify's `frameworkErrors`: answers a request its router could not take. */
export type RefuseUnroutable = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;

interface Guarded extends RouteEntry {
  readonly allow: string;
}

/** Installs the guards on `app`; returns what the app's `frameworkErrors` should call. */
export function installGuards(app: FastifyInstance, options: GuardOptions): RefuseUnroutable {
  const byUrl = new Map<string, Guarded>(options.routes.map((route) => [route.path, { ...route, allow: route.methods.join(', ') }]));
  const routeOf = (request: FastifyRequest): Guarded | undefined => {
    const url = request.routeOptions.url;
    return url === undefined ? undefined : byUrl.get(url);
  };
  // CONNECT never reaches the request handler (Node emits 'connect').
  for (const method of METHODS) if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  for (const route of byUrl.values()) {
    // fastify serves HEAD with a GET route's handler: not one of the others.
    const others = app.supportedMethods.filter((method) => !(route.methods as readonly string[]).includes(method) && !(method === 'HEAD' && route.methods.includes('GET')));
    // Answered 405 by the hook below, before any body is read; the handler is not reached.
    if (others.length > 0) app.route({ method: others, url: route.path, exposeHeadRoute: false, handler: (_request, reply) => methodNotAllowed(reply, route) });
  }

  const auth = options.auth ?? new BasicAuthChecker();
  app.addHook('onClose', () => auth.close());
  let scrapes = 0;

  /** True when it answered the request. */
  const guard = async (request: FastifyRequest, reply: FastifyReply, route: Guarded | undefined): Promise<boolean> => {
    const web = options.webConfig();
    for (const [name, value] of Object.entries(web.headers)) reply.header(name, value);
    if (web.users.size > 0 && route?.auth !== 'none') {
      const credentials = parseBasicAuth(request.headers.authorization);
      const outcome = credentials ? await auth.verify(web.users, credentials) : 'denied';
      if (outcome === 'queue_full' || outcome === 'queue_timeout') {
        // Too many checks under way (a flood of guesses): refused fast, before any bcrypt work.
        options.onAuthThrottled?.(outcome);
        plainAnswer(reply.header('retry-after', '1'), 429, 'too many authentication attempts in progress\n');
        return true;
      }
      // One answer for a missing header, an unknown user and a wrong password.
      if (outcome !== 'ok') {
        plainAnswer(reply.header('www-authenticate', BASIC_CHALLENGE), 401, 'Unauthorized\n');
        return true;
      }
    }
    if (!route) return false;
    if (!(route.methods as readonly string[]).includes(request.method)) {
      methodNotAllowed(reply, route);
      return true;
    }
    if (route.scrapeCap) {
      if (scrapes >= options.maxRequests) {
        plainAnswer(reply.header('retry-after', '1'), 503, `too many concurrent scrapes (limit ${options.maxRequests})\n`);
        return true;
      }
      scrapes += 1;
      reply.raw.once('close', () => {
        scrapes -= 1;
      });
    }
    return false;
  };

  const answered = options.answered;
  if (answered) {
    app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
      answered(routeOf(request)?.path ?? OTHER_PATH, reply.statusCode);
    });
  }

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => ((await guard(request, reply, routeOf(request))) ? reply : undefined));

  return (error, request, reply) => {
    // Neither hook runs for these: the answer is counted here.
    if (answered) reply.raw.once('finish', () => answered(OTHER_PATH, reply.statusCode));
    const tooLong = error.statusCode === 414;
    guard(request, reply, undefined).then(
      (done) => {
        // Nothing of the URL is echoed: it may carry a token.
        if (!done) plainAnswer(reply, tooLong ? 414 : 400, tooLong ? 'URI too long\n' : 'bad request\n');
      },
      (failure: unknown) => {
        app.log.error({ err: failure }, 'request failed');
        if (!reply.sent) plainAnswer(reply, 500, 'internal error\n');
      },
    );
  };
}

function methodNotAllowed(reply: FastifyReply, route: Guarded): FastifyReply {
  return plainAnswer(reply.header('allow', route.allow), 405, 'method not allowed\n');
}

