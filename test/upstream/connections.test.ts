/**
 * The socket budget of a thread (max_connections / workers) and the address guard of discovered
 * servers, on the HTTP layer every upstream client shares.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedRange } from '../../src/upstream/address-guard.js';
import { ConnectionBudget } from '../../src/upstream/connections.js';
import { UpstreamHttp } from '../../src/upstream/http.js';
import { isUpstreamError } from '../../src/lib/errors.js';
import { NO_STATS } from '../helpers/runtime.js';

let server: Server;
let url: string;
let open = 0;
let peak = 0;
beforeAll(async () => {
  server = createServer((_req, res) => {
    // A little later, so requests of several clients overlap.
    setTimeout(() => res.setHeader('content-type', 'application/json').end('{"ok":true}'), 20);
  });
  server.on('connection', (socket: Socket) => {
    open++;
    peak = Math.max(peak, open);
    socket.on('close', () => open--);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function client(budget: ConnectionBudget | undefined, name: string): UpstreamHttp {
  return new UpstreamHttp({ target: name, baseUrl: url, credentialHint: 'none', timeoutMs: 5000, maxResponseBytes: 1024, stats: NO_STATS, ...(budget ? { budget } : {}) });
}

describe('connection budget', () => {
  it('keeps the sockets of many clients within the budget, and every request is answered', async () => {
    peak = 0;
    const budget = new ConnectionBudget(3);
    const clients = Array.from({ length: 12 }, (_, i) => client(budget, `t${i}`));
    const signal = new AbortController().signal;
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(clients.flatMap((c) => [c.getJson('/x', '/x', undefined, signal), c.getJson('/x', '/x', undefined, signal)]));
      expect(answers.every((a) => a.ok === true)).toBe(true);
    }
    // The client's sockets (file descriptors); the server may see a closed one a moment later.
    expect(budget.peak).toBe(3);
    await Promise.all(clients.map((c) => c.destroy()));
  });

  it('closes idle keep-alive sockets of other clients for a client that needs one', async () => {
    const budget = new ConnectionBudget(1);
    const [a, b] = [client(budget, 'a'), client(budget, 'b')];
    const signal = new AbortController().signal;
    await a.getJson('/x', '/x', undefined, signal);
    // a keeps its socket alive for 60 s; b gets it reclaimed at once instead of waiting.
    const started = Date.now();
    await b.getJson('/x', '/x', undefined, signal);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(budget.inUse).toBeLessThanOrEqual(1);
    await Promise.all([a.destroy(), b.destroy()]);
  });
});

describe('address guard', () => {
  it('refuses a discovered server on loopback before connecting, and counts the range', async () => {
    const refused: string[] = [];
    const before = peak;
    open = 0;
    const http = new UpstreamHttp({
      target: 'found',
      baseUrl: url,
      credentialHint: 'none',
      timeoutMs: 2000,
      maxResponseBytes: 1024,
      stats: NO_STATS,
      guard: { allowLoopback: false },
      onRefused: (range) => refused.push(range),
    });
    const error = await http.getJson('/x', '/x', undefined, new AbortController().signal).catch((e: unknown) => e);
    expect(isUpstreamError(error) && error.kind).toBe('address_refused');
    expect(isUpstreamError(error) && error.reason).toBe('connection');
    expect(String((error as Error).message)).toMatch(/127\.0\.0\.1 is loopback, refused for discovered servers/);
    expect(refused).toEqual(['loopback']);
    expect(open).toBe(0);
    expect(peak).toBe(before);
    await http.destroy();
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['0.0.0.0', 'loopback'],
    ['::1', 'loopback'],
    ['::', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['febf::1', 'link_local'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['10.0.0.1', undefined],
    ['192.168.1.1', undefined],
    ['fec0::1', undefined],
    ['2001:db8::1', undefined],
    ['169.255.0.1', undefined],
  ])('%s is %s', (address, range) => {
    expect(refusedRange(address, { allowLoopback: false })).toBe(range);
  });

  it('allows loopback when told, never link-local', () => {
    expect(refusedRange('127.0.0.1', { allowLoopback: true })).toBeUndefined();
    expect(refusedRange('::1', { allowLoopback: true })).toBeUndefined();
    expect(refusedRange('169.254.169.254', { allowLoopback: true })).toBe('link_local');
    expect(refusedRange('fe80::1', { allowLoopback: true })).toBe('link_local');
  });
});
