/**
 * A response holds its exposition's buffers until it ends (src/serve/exposition-reply.ts with
 * src/serve/reclaim.ts): a client still reading keeps them from being handed over however many
 * polls replace them, one that read everything lets them go, and one that went away leaves them to
 * the garbage collector (a socket write or an inflate may still hold them).
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { sendExposition } from '../../src/serve/exposition-reply.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { prepareTarget } from '../../src/render/prepare.js';
import { finalPiece } from '../../src/render/gzip-stream.js';

const TAIL = Buffer.from('tail 1\n');
/** Incompressible, so the deflated piece (~8 MB) is far more than loopback socket buffers hold. */
const SIZE = 8 * 1024 * 1024;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

interface Served {
  readonly port: number;
  readonly cache: ExpositionCache;
  readonly freed: Set<ArrayBuffer>;
  /** Resolves when the n-th response (from 1) was written, and when it ended. */
  written(n: number): Promise<void>;
  ended(n: number): Promise<void>;
}

async function serve(): Promise<Served> {
  const freed = new Set<ArrayBuffer>();
  const cache = new ExpositionCache({
    free: (buffers) => {
      for (const b of buffers) freed.add(b);
      structuredClone(buffers, { transfer: buffers });
    },
  });
  const written: (() => void)[] = [];
  const ended: (() => void)[] = [];
  const writtenP: Promise<void>[] = [];
  const endedP: Promise<void>[] = [];
  for (let i = 0; i < 4; i++) {
    writtenP.push(new Promise((r) => (written[i] = r)));
    endedP.push(new Promise((r) => (ended[i] = r)));
  }
  let count = 0;
  app = Fastify();
  app.get('/metrics', (request, reply) => {
    const n = count++;
    const sent = sendExposition(reply, cache.snapshot(), finalPiece(TAIL), request.headers['accept-encoding'] === 'gzip');
    reply.raw.once('close', () => ended[n]!());
    written[n]!();
    return sent;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { port, cache, freed, written: (n) => writtenP[n - 1]!, ended: (n) => endedP[n - 1]! };
}

function request(port: number, encoding = 'gzip'): Socket {
  const socket = connect({ host: '127.0.0.1', port }, () => {
    socket.write(`GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${encoding}\r\nConnection: close\r\n\r\n`);
  });
  socket.setTimeout(20_000, () => socket.destroy(new Error('no answer in 20 s')));
  return socket;
}

function body(socket: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('close', () => {
      const all = Buffer.concat(chunks);
      resolve(all.subarray(all.indexOf('\r\n\r\n') + 4));
    });
    socket.resume();
  });
}

function target(text: Buffer) {
  const prepared = prepareTarget(new Map([['flussonic_stream_alive', [text]]]));
  return { prepared, buffer: prepared.get('flussonic_stream_alive')!.deflated.buffer as ArrayBuffer };
}

describe('a response and the buffers it sends', () => {
  it('holds them while the client reads slowly, through replacements, and lets them go once read', async () => {
    const served = await serve();
    const first = randomBytes(SIZE);
    const old = target(first);
    served.cache.swapPrepared('a', old.prepared);
    const slow = request(served.port);
    slow.pause();
    await served.written(1);
    // Replaced twice while the answer waits in the socket: not handed over.
    const second = target(randomBytes(SIZE));
    served.cache.swapPrepared('a', second.prepared);
    served.cache.swapPrepared('a', target(randomBytes(1024)).prepared);
    expect(served.freed.has(old.buffer)).toBe(false);
    expect(served.freed.has(second.buffer)).toBe(true); // no response ever sent it
    // Read to the end: the text is the one of its version, whole.
    const zipped = await body(slow);
    const text = gunzipSync(zipped);
    expect(text.subarray(text.length - first.length - TAIL.length).equals(Buffer.concat([first, TAIL]))).toBe(true);
    expect(text.subarray(0, text.length - first.length - TAIL.length).toString()).toMatch(/^# HELP flussonic_stream_alive [^\n]*\n# TYPE flussonic_stream_alive gauge\n$/);
    await served.ended(1);
    expect(served.freed.has(old.buffer)).toBe(true);
  });

  it('leaves them to the garbage collector when a plain answer is cut off while inflating', async () => {
    const served = await serve();
    const old = target(randomBytes(SIZE));
    served.cache.swapPrepared('a', old.prepared);
    // It never reads: 8 MB cannot all be inflated into the socket, so the answer is unfinished.
    const gone = request(served.port, 'identity');
    gone.pause();
    await served.written(1);
    gone.destroy();
    await served.ended(1);
    served.cache.swapPrepared('a', target(randomBytes(1024)).prepared);
    expect(served.freed.has(old.buffer)).toBe(false);
    // Later versions are handed over as usual.
    const later = target(randomBytes(1024));
    served.cache.swapPrepared('a', later.prepared);
    const full = request(served.port);
    await body(full);
    await served.ended(2);
    served.cache.swapPrepared('a', target(randomBytes(1024)).prepared);
    expect(served.freed.has(later.buffer)).toBe(true);
    expect(served.freed.has(old.buffer)).toBe(false);
  });
});
