/**
 * How an exposition leaves: gzip when the client takes it (Prometheus always does), else text
 * inflated from the same pieces while it is sent. Shared by /metrics and /probe.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { CONTENT_TYPE, type Exposition } from '../metrics/exposition.js';
import type { FinalPiece } from '../metrics/gzip-stream.js';

/**
 * Sends an exposition with its tail: as the gzip member when the client takes gzip, else as text
 * inflated while it is sent. Either way the length is known up front, and the cached pieces are
 * sent as they are, never a concatenated copy of a possibly large exposition.
 */
export function sendExposition(reply: FastifyReply, exposition: Exposition, tail: FinalPiece, gzip: boolean): FastifyReply {
  reply.code(200).header('content-type', CONTENT_TYPE).header('vary', 'Accept-Encoding').header('cache-control', 'no-store');
  if (!gzip) return reply.header('content-length', exposition.bytes + tail.bytes).send(exposition.plain(tail));
  const parts = exposition.gzip(tail);
  let length = 0;
  for (const p of parts) length += p.byteLength;
  return reply.header('content-encoding', 'gzip').header('content-length', length).send(Readable.from(parts, { objectMode: false }));
}

/** Whether an Accept-Encoding header admits gzip (`gzip`, `x-gzip` or `*`, with q > 0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let star = false;
  for (const part of header.split(',')) {
    const [rawName, ...params] = part.split(';');
    const name = rawName!.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (name === 'gzip' || name === 'x-gzip') return q > 0;
    if (name === '*') star = q > 0;
  }
  return star;
}
