/**
 * Closing the listeners (SIGTERM) waits for the requests in flight, then ends their connections:
 * a kept-alive connection answering at that moment does not hold the close until its idle timeout.
 */
import { connect } from 'node:net';
import { expect, test } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/serve/limits.js';
import { startListeners } from '../../src/serve/listen.js';
import { WebConfigSource } from '../../src/serve/web-config-source.js';
import { captureLogger } from '../helpers/runtime.js';

const ANSWER_AFTER_MS = 300;
/** Far beyond the test's bound: a close that waits for it fails the race below. */
const IDLE_TIMEOUT_MS = 20_000;

test('a keep-alive request in flight at close is answered, then its connection ends and the close resolves', async () => {
  const log = captureLogger();
  const web = new WebConfigSource(undefined, log.logger);
  const listeners = await startListeners({
    handler: (_req, res) => void setTimeout(() => res.end('answered\n'), ANSWER_AFTER_MS),
    addresses: [{ host: '127.0.0.1', port: 0 }],
    limits: { ...DEFAULT_LIMITS, idleTimeoutMs: IDLE_TIMEOUT_MS },
    web,
    log: log.logger,
    onListenError: (_a, e) => (e instanceof Error ? e : new Error(String(e))),
  });
  const socket = connect({ host: '127.0.0.1', port: listeners.addresses[0]!.port });
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // The request is in flight (headers read, no answer yet) when the close begins.
    await new Promise((resolve) => setTimeout(resolve, ANSWER_AFTER_MS / 3));
    expect(listeners.connections.size).toBe(1);
    const started = Date.now();
    const closed = listeners.close().then(() => Date.now() - started);
    const bound = new Promise<string>((resolve) => setTimeout(() => resolve('still open after 5 s'), 5_000).unref());
    const outcome = await Promise.race([closed, bound]);
    expect(outcome).toBeTypeOf('number');
    expect(outcome as number).toBeGreaterThanOrEqual(ANSWER_AFTER_MS / 2);
    await socketClosed;
    expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(received).toMatch(/\r\n\r\nanswered\n$/);
  } finally {
    socket.destroy();
    web.close();
    await listeners.close();
  }
});
