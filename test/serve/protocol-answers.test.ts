/**
 * What a client that breaks the protocol is told, as Go's net/http (exporter-toolkit) tells it:
 * plain HTTP on the TLS port gets 400 "Client sent an HTTP request to an HTTPS server" in the
 * clear, oversized request headers get 431; and the connections the limits close are counted by
 * reason. Raw sockets on loopback, a handful each.
 */
import { connect } from 'node:net';
import { expect, test } from 'vitest';
import { get, serve, type Served, webFixture } from '../helpers/web.js';

const { dir, running } = webFixture();

async function start(options: Parameters<typeof serve>[0] = {}): Promise<Served> {
  const served = await serve(options);
  running.push(served);
  return served;
}

/** Sends `request` on a raw TCP connection and resolves with everything received until the server closes it. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 5 s; received ${JSON.stringify(received.slice(0, 200))}`));
    }, 5000);
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.once('connect', () => socket.write(request));
  });
}

test('plain HTTP on the TLS port is answered 400 in the clear, as Go answers it; HTTPS still works', async () => {
  const served = await start({ webConfigFile: dir.write('tls.yml', 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n') });
  const port = served.listeners.addresses[0]!.port;
  for (const method of ['GET', 'POST', 'HEAD']) {
    const answer = await exchange(port, `${method} /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(answer).toBe('HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n');
  }
  // What an HTTP client shows its user.
  const viaClient = await get(`http://127.0.0.1:${port}/metrics`);
  expect(viaClient.status).toBe(400);
  expect(viaClient.body).toBe('Client sent an HTTP request to an HTTPS server.\n');
  expect((await get(`${served.base}/metrics`, { ca: dir.read('server.pem') })).status).toBe(200);
});

test("request headers over Node's limit get 431, not a closed connection", async () => {
  const served = await start();
  const port = served.listeners.addresses[0]!.port;
  const answer = await exchange(port, `GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  // An ordinary request on the same server is still answered.
  expect((await get(`${served.base}/metrics`)).status).toBe(200);
});

test('the connections the limits close are counted by reason', async () => {
  const served = await start({ limits: { maxConnections: 2, readHeaderTimeoutMs: 300 } });
  const port = served.listeners.addresses[0]!.port;
  const guard = served.listeners.connections;
  // Two idle connections fill the cap; a third replaces the longest-idle one.
  const sockets = [connect({ host: '127.0.0.1', port }), connect({ host: '127.0.0.1', port })];
  for (const s of sockets) s.on('error', () => undefined);
  await until(() => guard.size === 2);
  const third = connect({ host: '127.0.0.1', port });
  third.on('error', () => undefined);
  sockets.push(third);
  await until(() => guard.dropped('replaced') === 1);
  // The remaining idle ones never send a request: closed at the header timeout.
  await until(() => guard.dropped('header_timeout') === 2);
  expect(guard.dropped('refused')).toBe(0);
  for (const s of sockets) s.destroy();
});

async function until(probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
