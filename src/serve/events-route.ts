/**
 * POST /events/<server>: the event sink route (src/events/receiver.ts counts). Its own auth (the
 * server's events_secret, as Basic userinfo or `?token=`), checked before the body is read; its
 * own body cap (events.max_body_size); the body is read as text, whatever its content type, and
 * parsed once by the receiver. Nothing of the request (its URL carries the token) is logged.
 */
import type { FastifyRequest } from 'fastify';
import type { EventsReceiver } from '../events/receiver.js';
import { BASIC_CHALLENGE } from './basic-auth.js';
import type { RawBodyRoute, RouteHandler } from './route-types.js';
import { plainAnswer } from './plain-answer.js';

export const EVENTS_PATH = '/events/:server';

function serverOf(request: FastifyRequest): string {
  return (request.params as { server?: string }).server ?? '';
}


/** Without a receiver (events.enabled off) every request is answered 404 before its body is read. */
export function eventsRawBody(receiver: EventsReceiver | undefined): RawBodyRoute {
  if (!receiver) return { limit: 1024, before: (_request, reply) => plainAnswer(reply, 404, 'the event sink is off (events.enabled)\n'), failed: (_request, reply, code) => plainAnswer(reply, code, 'bad request\n') };
  return {
    limit: receiver.config.maxBodyBytes,
    before: (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const token = typeof query.token === 'string' ? query.token : undefined;
      const outcome = receiver.authorize(serverOf(request), request.headers.authorization, token);
      if (outcome === 'unknown') return plainAnswer(reply, 404, 'unknown server\n');
      // The secret is a Basic password: a sender that waits for a challenge is given one.
      if (outcome === 'denied') return plainAnswer(reply.header('www-authenticate', BASIC_CHALLENGE), 401, 'Unauthorized\n');
      return undefined;
    },
    failed: (request, reply, code) => {
      receiver.refused(serverOf(request), code);
      return plainAnswer(reply, code, code === 413 ? `body over events.max_body_size (${receiver.config.maxBodyBytes} bytes)\n` : 'bad request\n');
    },
  };
}

export function eventsHandler(receiver: EventsReceiver | undefined): RouteHandler {
  return (request, reply) => {
    if (!receiver) return plainAnswer(reply, 404, 'the event sink is off (events.enabled)\n');
    const body = typeof request.body === 'string' ? request.body : '';
    const answer = receiver.receive(serverOf(request), body);
    return plainAnswer(reply, answer.code, answer.text);
  };
}
