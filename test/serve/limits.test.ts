/**
 * Idle and slowloris connections are closed within the configured timeouts, and the connection
 * cap holds while /metrics still answers. Small, bounded counts on loopback: a cap of 20 and 30
 * idle sockets.
 */
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, test } from 'vitest';
import { get, serve, WebDir, type Served } from '../helpers/web.js';

const LIMITS = { readHeaderTimeoutMs: 400, idleTimeoutMs: 400, requestTimeoutMs: 1500, maxConnections: 20 };
/** Slack over a timeout for the event loop of a loaded 2-core machine. */
const SLACK_MS = 1500;
const running: Served[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function start(): Promise<Served> {
  const served = await serve({ limits: LIMITS });
  running.push(served);
  return served;
}

interface Client {
  readonly socket: Socket;
  /** Milliseconds from connecting until the server closed it. */
  readonly closed: Promise<number>;
  received: string;
}

function open(port: number): Promise<Client> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    const client: Client = {
      socket,
      received: '',
      closed: new Promise((done) => socket.once('close', () => done(Date.now() - started))),
    };
    socket.on('data', (chunk) => (client.received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(client));
    socket.once('error', reject);
  });
}

describe('timeouts', () => {
  test('a connection that never sends a byte is closed after the header timeout', async () => {
    const served = await start();
    const clients = await Promise.all(Array.from({ length: 5 }, () => open(served.listeners.addresses[0]!.port)));
    for (const ms of await Promise.all(clients.map((c) => c.closed))) {
      expect(ms).toBeGreaterThanOrEqual(LIMITS.readHeaderTimeoutMs - 50);
      expect(ms).toBeLessThan(LIMITS.readHeaderTimeoutMs + SLACK_MS);
    }
  });

  test('slowloris: headers trickling in forever are cut off at the header timeout', async () => {
    const served = await start();
    const clients = await Promise.all(Array.from({ length: 5 }, () => open(served.listeners.addresses[0]!.port)));
    const timers = clients.map((c, i) => {
      c.socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
      return setInterval(() => c.socket.writable && c.socket.write(`X-${i}: y\r\n`), 50);
    });
    try {
      for (const ms of await Promise.all(clients.map((c) => c.closed))) expect(ms).toBeLessThan(LIMITS.readHeaderTimeoutMs + SLACK_MS);
    } finally {
      timers.forEach((t) => clearInterval(t));
    }
  });

  test('slowloris on a kept-alive connection: a later request trickling its headers is cut off within twice the header timeout', async () => {
    const served = await start();
    const client = await open(served.listeners.addresses[0]!.port);
    client.socket.write('GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n');
    const deadline = Date.now() + 5000;
    while (!/^HTTP\/1\.1 200 /.test(client.received) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(client.received).toMatch(/^HTTP\/1\.1 200 /);
    const trickleFrom = Date.now();
    client.socket.write('GET /-/healthy HTTP/1.1\r\nHost: x\r\n');
    const timer = setInterval(() => client.socket.writable && client.socket.write('X-a: y\r\n'), 50);
    try {
      await client.closed;
      const ms = Date.now() - trickleFrom;
      expect(ms).toBeGreaterThanOrEqual(LIMITS.readHeaderTimeoutMs - 50);
      expect(ms).toBeLessThan(2 * LIMITS.readHeaderTimeoutMs + SLACK_MS);
    } finally {
      clearInterval(timer);
    }
  });

  test('an idle keep-alive connection is closed after the idle timeout', async () => {
    const served = await start();
    const client = await open(served.listeners.addresses[0]!.port);
    client.socket.write('GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n');
    const ms = await client.closed;
    expect(client.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(ms).toBeGreaterThanOrEqual(LIMITS.idleTimeoutMs - 50);
    // Node keeps an idle connection 1 s past keepAliveTimeout (the Keep-Alive header's grace for clients).
    expect(ms).toBeLessThan(LIMITS.idleTimeoutMs + 1000 + SLACK_MS);
  });
});

test('over TLS, a busy keep-alive connection outlives the header timeout (the guard sees its requests)', async () => {
  const dir = new WebDir();
  try {
    dir.serverCert('server');
    const served = await serve({ limits: LIMITS, webConfigFile: dir.write('tls.yml', 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n') });
    running.push(served);
    const socket = tlsConnect({ host: '127.0.0.1', port: served.listeners.addresses[0]!.port, ca: dir.read('server.pem'), servername: 'localhost' });
    sockets.push(socket);
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    let closed = false;
    socket.once('close', () => (closed = true));
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    // Five requests on one connection, 200 ms apart: 1 s in all, over twice the header timeout.
    for (let i = 1; i <= 5; i++) {
      socket.write('GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n');
      const deadline = Date.now() + 2000;
      while (!closed && (received.match(/HTTP\/1\.1 200 /g) ?? []).length < i && Date.now() < deadline) {
        await new Promise((resolve) => {
          socket.once('data', resolve);
          socket.once('close', resolve);
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((received.match(/HTTP\/1\.1 200 /g) ?? []).length).toBe(5);
    expect(closed).toBe(false);
  } finally {
    dir.cleanup();
  }
});

describe('the connection cap', () => {
  test('30 idle sockets against a cap of 20: never more than 20 open, and /metrics still answers', async () => {
    const served = await start();
    const port = served.listeners.addresses[0]!.port;
    const clients: Client[] = [];
    let most = 0;
    for (let i = 0; i < 30; i++) {
      clients.push(await open(port));
      // The server has seen the connection once it counts it or refused it: wait for that.
      await new Promise((resolve) => setImmediate(resolve));
      most = Math.max(most, served.listeners.connections.size);
    }
    expect(most).toBeLessThanOrEqual(LIMITS.maxConnections);
    expect(served.listeners.connections.size).toBeLessThanOrEqual(LIMITS.maxConnections);
    expect(served.listeners.connections.refused).toBeGreaterThanOrEqual(10);

    // While the idle sockets hold every slot, a scrape replaces the longest-idle one.
    const res = await get(`${served.base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/^flussonic_exporter_build_info/m);
    expect(served.listeners.connections.size).toBeLessThanOrEqual(LIMITS.maxConnections);

    // And every idle socket is gone within the header timeout.
    const closed = await Promise.all(clients.map((c) => c.closed));
    expect(Math.max(...closed)).toBeLessThan(LIMITS.readHeaderTimeoutMs + SLACK_MS + 1000);
  });
});
