/**
 * The handlers of the exporter's own routes: the metrics path (the cached upstream exposition,
 * the event sink's series, then the self-metrics rendered now), health and readiness.
 */
import type { FastifyReply } from 'fastify';
import { finalPiece, precede, type FinalPiece } from '../render/gzip-stream.js';
import { acceptsGzip, sendExposition } from './exposition-reply.js';
import type { RawBodyRoute, RouteDeps, RouteHandler } from './route-types.js';
import { plainAnswer } from './plain-answer.js';

/**
 * With gzip, one gzip member: the upstream pieces deflated where they were polled, sent as they
 * are, then the event sink's series (src/events) as a piece deflated once per change, then the
 * self-metrics as the final deflate block and the trailer (src/render/gzip-stream.ts).
 */
export function metricsHandler(deps: RouteDeps): RouteHandler {
  // The self-metrics rendering is shared by closely following scrapes (SelfMetrics.render); so is
  // its UTF-8 and its final deflate block.
  let selfEncoded: { readonly text: string; readonly bytes: Buffer; final?: FinalPiece } | undefined;
  const encodeSelf = (text: string) => {
    if (selfEncoded?.text !== text) selfEncoded = { text, bytes: Buffer.from(text, 'utf8') };
    return selfEncoded;
  };
  return async (request, reply) => {
    const [ownText] = await Promise.all([deps.self.render(), deps.exposition.ready()]);
    const upstream = deps.exposition.snapshot();
    const self = encodeSelf(ownText);
    const final = (self.final ??= finalPiece(self.bytes));
    return sendExposition(reply, upstream, deps.events ? precede(deps.events.piece(), final) : final, acceptsGzip(request.headers['accept-encoding']));
  };
}

/** The most of a POST /-/reload body read (and dropped); a longer one is answered 413. */
export const RELOAD_BODY_LIMIT = 64 * 1024;

/**
 * The body of POST /-/reload, which Prometheus ignores: read whatever its content type, up to
 * RELOAD_BODY_LIMIT, and dropped. Without --web.enable-lifecycle the 403 comes before it is read.
 */
export function reloadBody(deps: RouteDeps): RawBodyRoute {
  return {
    limit: RELOAD_BODY_LIMIT,
    before: (_request, reply) => (deps.lifecycle?.enabled ? undefined : lifecycleOff(reply)),
    failed: (_request, reply, code) => plainAnswer(reply, code, code === 413 ? `body over ${RELOAD_BODY_LIMIT} bytes (the body is ignored: send none)\n` : 'bad request\n'),
  };
}

/**
 * POST /-/reload: reloads as SIGHUP does when --web.enable-lifecycle is on; else 403 with
 * Prometheus' words. A failed reload answers 500 with its one-line reason (the log has every problem).
 */
export function reloadHandler(deps: RouteDeps): RouteHandler {
  return (_request, reply) => {
    const lifecycle = deps.lifecycle;
    if (!lifecycle?.enabled) return lifecycleOff(reply);
    const outcome = lifecycle.reload();
    return outcome.ok ? plainAnswer(reply, 200, '') : plainAnswer(reply, 500, `failed to reload config: ${outcome.error}\n`);
  };
}

export function healthyHandler(): RouteHandler {
  return (_request, reply) => plainAnswer(reply, 200, 'healthy\n');
}

export function readyHandler(deps: RouteDeps): RouteHandler {
  return (_request, reply) => {
    if (deps.ready()) return plainAnswer(reply, 200, 'ready\n');
    const waiting = deps.statuses().filter((s) => !s.lastPoll).length;
    return plainAnswer(reply, 503, `not ready: waiting for the first poll of ${waiting} target(s)\n`);
  };
}

function lifecycleOff(reply: FastifyReply): FastifyReply {
  return plainAnswer(reply, 403, 'Lifecycle API is not enabled.\n');
}

