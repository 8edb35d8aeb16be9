/**
 * How long the HTTP layer keeps an idle upstream connection, and that a new poll interval changes
 * it (UpstreamHttp.setKeepAliveTimeout, called when a reload changes a server's poll_interval).
 * The server here gives no Keep-Alive hint, so the client's own timeout rules.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UpstreamHttp } from '../../src/upstream/http.js';
import { NO_STATS } from '../helpers/runtime.js';

let server: Server;
let url: string;
let open = 0;
let accepted = 0;
beforeAll(async () => {
  server = createServer((_req, res) => res.setHeader('content-type', 'application/json').end('{"ok":true}'));
  server.keepAliveTimeout = 0; // no hint, no server-side idle timeout
  server.on('connection', (socket: Socket) => {
    open++;
    accepted++;
    socket.on('close', () => open--);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await sleep(20);
  return condition();
}

it('keeps an idle connection for its keep-alive timeout, and for a new one once it is set', async () => {
  const http = new UpstreamHttp({ target: 't', baseUrl: url, credentialHint: 'none', timeoutMs: 5000, maxResponseBytes: 1024, stats: NO_STATS, keepAliveTimeoutMs: 200 });
  const signal = new AbortController().signal;
  try {
    await http.getJson('/x', '/x', undefined, signal);
    expect(open).toBe(1);
    expect(await until(() => open === 0, 3000), 'closed by the client after 200 ms idle').toBe(true);

    (http as unknown as { setKeepAliveTimeout?: (ms: number) => void }).setKeepAliveTimeout?.(60_000);
    await http.getJson('/x', '/x', undefined, signal);
    await sleep(800);
    expect(open, 'still open 800 ms later').toBe(1);

    // The same timeout again keeps the pool and its connection.
    const before = accepted;
    (http as unknown as { setKeepAliveTimeout?: (ms: number) => void }).setKeepAliveTimeout?.(60_000);
    await http.getJson('/x', '/x', undefined, signal);
    expect(accepted).toBe(before);
  } finally {
    await http.destroy();
  }
});
