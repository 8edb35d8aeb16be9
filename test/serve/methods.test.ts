/**
 * Every method other than GET and HEAD on a known path answers 405 with `Allow: GET, HEAD`
 * (TRACE and PROPFIND too, which fastify does not route by itself), decided in one global hook
 * from the route table's entry of the route fastify matched, however its path is spelled. And
 * --web.max-requests: concurrent scrapes beyond it get 503, whatever the spelling of the path.
 */
import { connect } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import { installGuards } from '../../src/serve/guards.js';
import type { RouteEntry } from '../../src/serve/route-types.js';
import { NO_WEB_CONFIG } from '../../src/serve/web-config.js';
import { serve, type Served } from '../helpers/web.js';

const running: Served[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** One raw HTTP/1.1 request (any method token), the status line and headers of the answer (status 0: none within 5 s). */
function raw(port: number, method: string, path: string): Promise<{ status: number; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.setTimeout(5000, () => socket.destroy());
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.once('error', reject);
    socket.once('close', () => {
      const head = text.split('\r\n\r\n')[0] ?? '';
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head: head.toLowerCase() });
    });
  });
}

const entry = (path: string, scrapeCap = false): RouteEntry => ({ path, methods: ['GET', 'HEAD'], auth: 'web-config', scrapeCap });

const METHODS = ['TRACE', 'PROPFIND', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'MKCOL', 'COPY', 'LOCK', 'SEARCH', 'PURGE', 'CONNECT'];

describe('405 with Allow: GET, HEAD', () => {
  test('every other method on every known path, over a real socket', async () => {
    const served = await serve();
    running.push(served);
    const port = served.listeners.addresses[0]!.port;
    for (const path of ['/metrics', '/metrics/', '/metrics?x=1', '/', '/-/healthy', '/-/ready']) {
      for (const method of METHODS) {
        if (method === 'CONNECT') continue; // CONNECT takes host:port, not a path
        const res = await raw(port, method, path);
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.head, `${method} ${path}`).toContain('\r\nallow: get, head');
      }
      expect((await raw(port, 'GET', path)).status, path).toBe(200);
      expect((await raw(port, 'HEAD', path)).status, path).toBe(200);
    }
    // The path fastify routes, however it is spelled.
    for (const path of ['/metric%73', '/%6detrics', 'http://x/metrics', '/metrics#']) {
      const res = await raw(port, 'POST', path);
      expect(res.status, `POST ${path}`).toBe(405);
      expect(res.head, `POST ${path}`).toContain('\r\nallow: get, head');
    }
    // Unknown paths stay 404 whatever the method.
    expect((await raw(port, 'PROPFIND', '/nope')).status).toBe(404);
    expect((await raw(port, 'GET', '/nope')).status).toBe(404);
  });

  test('a route of the table (like /probe) gets the same answer from its entry', async () => {
    const app = Fastify();
    installGuards(app, { webConfig: () => NO_WEB_CONFIG, routes: [entry('/metrics', true), entry('/probe')], maxRequests: 5 });
    app.get('/probe', async () => 'ok');
    for (const method of ['TRACE', 'PROPFIND', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/probe?target=a' });
      expect(res.statusCode, method).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    }
    expect((await app.inject({ method: 'GET', url: '/probe' })).statusCode).toBe(200);
    await app.close();
  });
});

describe('--web.max-requests', () => {
  test('concurrent scrapes beyond the cap get 503; a finished one frees its slot', async () => {
    const app = Fastify();
    installGuards(app, { webConfig: () => NO_WEB_CONFIG, routes: [entry('/metrics', true), entry('/-/healthy')], maxRequests: 2 });
    // A metrics handler that waits until released: the scrapes stay in flight.
    const gates: (() => void)[] = [];
    app.get('/metrics', () => new Promise<string>((resolve) => gates.push(() => resolve('m 1\n'))));
    app.get('/-/healthy', async () => 'healthy');
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const first = fetch(`${base}/metrics`);
      const second = fetch(`${base}/metrics`);
      while (gates.length < 2) await new Promise((resolve) => setImmediate(resolve));
      const third = await fetch(`${base}/metrics`);
      expect(third.status).toBe(503);
      expect(await third.text()).toBe('too many concurrent scrapes (limit 2)\n');
      // Other paths are not counted.
      expect((await fetch(`${base}/-/healthy`)).status).toBe(200);
      gates.shift()!();
      expect((await first).status).toBe(200);
      const fourth = fetch(`${base}/metrics`);
      while (gates.length < 2) await new Promise((resolve) => setImmediate(resolve));
      gates.splice(0).forEach((release) => release());
      expect([(await second).status, (await fourth).status]).toEqual([200, 200]);
    } finally {
      await app.close();
    }
  });

  test('the cap counts the route fastify runs, however its path is spelled', async () => {
    const app = Fastify();
    installGuards(app, { webConfig: () => NO_WEB_CONFIG, routes: [entry('/metrics', true)], maxRequests: 1 });
    const gates: (() => void)[] = [];
    app.get('/metrics', () => new Promise<string>((resolve) => gates.push(() => resolve('m 1\n'))));
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const port = (app.server.address() as { port: number }).port;
      const held = fetch(`http://127.0.0.1:${port}/metrics`);
      while (gates.length < 1) await new Promise((resolve) => setImmediate(resolve));
      // Percent-encoded, absolute-form and with a fragment: each is the metrics route, and refused.
      for (const path of ['/metrics', '/metric%73', '/%6detrics', 'http://x/metrics', '/metrics#', '/metrics?x=1']) {
        expect((await raw(port, 'GET', path)).status, path).toBe(503);
      }
      expect(gates.length).toBe(1);
      gates.shift()!();
      expect((await held).status).toBe(200);
    } finally {
      gates.splice(0).forEach((release) => release());
      await app.close();
    }
  });
});
