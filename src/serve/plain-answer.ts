/**
 * The form of every short answer of the HTTP face that is neither the exposition nor a page: a
 * status code and one line of plain UTF-8 text.
 */
import type { FastifyReply } from 'fastify';

export function plainAnswer(reply: FastifyReply, code: number, text: string): FastifyReply {
  return reply.code(code).type('text/plain; charset=utf-8').send(text);
}
