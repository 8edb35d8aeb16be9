/**
 * The gzip answer of /metrics is written straight to the socket (exposition-reply.ts, hijacked
 * from Fastify and corked), so what Fastify would otherwise have done must still happen: the
 * web config's headers, a Content-Length that matches the body, no body for HEAD, and the scrape
 * slot given back when a client goes away before its answer.
 */
import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { serve, WebDir, type Served } from '../helpers/web.js';

const dir = new WebDir();
const running: Served[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
afterAll(() => dir.cleanup());

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** One request over a fresh socket with `Connection: close`; the answer as the bytes that came. */
function rawRequest(port: number, method: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`${method} /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${extra}\r\n`);
    });
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer in 10 s')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, end).toString('latin1').split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0), headers: parsed, body: all.subarray(end + 4) });
    });
  });
}

async function start(limits = {}): Promise<{ served: Served; port: number }> {
  const webConfigFile = dir.write('headers.yml', 'http_server_config:\n  headers:\n    X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\n');
  const served = await serve({ webConfigFile, limits });
  running.push(served);
  return { served, port: served.listeners.addresses[0]!.port };
}

describe('the gzip answer written to the socket', () => {
  test('has the web config headers, the right length, and decodes to the plain answer', async () => {
    const { port } = await start();
    const zipped = await rawRequest(port, 'GET', { 'accept-encoding': 'gzip' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(zipped.headers['x-frame-options']).toBe('deny');
    expect(zipped.headers['x-content-type-options']).toBe('nosniff');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
    const plain = await rawRequest(port, 'GET');
    expect(plain.headers['x-frame-options']).toBe('deny');
    expect(gunzipSync(zipped.body).toString('utf8')).toBe(plain.body.toString('utf8'));
    expect(plain.body.toString('utf8')).toContain('flussonic_exporter_build_info{');
  });

  test('HEAD gets the headers of the gzip GET and no body', async () => {
    const { port } = await start();
    const get = await rawRequest(port, 'GET', { 'accept-encoding': 'gzip' });
    const head = await rawRequest(port, 'HEAD', { 'accept-encoding': 'gzip' });
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.body.length).toBe(0);
  });

  test('a client that leaves before its answer gives its scrape slot back', async () => {
    const { port } = await start({ maxRequests: 1 });
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port }, () => {
          socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n');
          socket.destroy();
          resolve();
        });
      });
    }
    // With a cap of one concurrent scrape, a slot still held by a gone client would answer 503.
    let answer: RawAnswer | undefined;
    for (let i = 0; i < 50; i++) {
      answer = await rawRequest(port, 'GET', { 'accept-encoding': 'gzip' });
      if (answer.status === 200) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(answer?.status).toBe(200);
    expect(gunzipSync(answer!.body).toString('utf8')).toContain('flussonic_exporter_build_info{');
  });
});
