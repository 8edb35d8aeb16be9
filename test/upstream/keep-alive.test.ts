/**
 * The HTTP layer's timing: how long a request attempt may take and how long an idle upstream
 * connection is kept, and that retime() changes both on a running client (a reload that changes
 * a target's poll_interval or timeout). The server here gives no Keep-Alive hint, so the client's
 * own keep-alive rules.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isUpstreamError } from '../../src/lib/errors.js';
import { UpstreamHttp } from '../../src/upstream/http.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { NO_STATS } from '../helpers/runtime.js';

const OK = { json: { ok: true } };
let server: ScriptedUpstream;
beforeAll(async () => {
  server = await startScripted((req) => (req.path === '/slow' ? (res) => setTimeout(() => res.setHeader('content-type', 'application/json').end('{"ok":true}'), 400) : OK), { keepAliveHint: false });
});
afterAll(() => server.close());

const open = () => server.connections().open;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await sleep(20);
  return condition();
}

const client = (timeoutMs: number, keepAliveTimeoutMs: number) =>
  new UpstreamHttp({ target: 't', baseUrl: server.url, credentialHint: 'none', timeoutMs, maxResponseBytes: 1024, stats: NO_STATS, keepAliveTimeoutMs, retryBackoffMs: 10 });

it('keeps an idle connection for its keep-alive timeout, and for a new one once retimed', async () => {
  const http = client(5000, 200);
  const signal = new AbortController().signal;
  try {
    await http.getJson('/x', '/x', undefined, signal);
    expect(open()).toBe(1);
    expect(await until(() => open() === 0, 3000), 'closed by the client after 200 ms idle').toBe(true);

    http.retime({ timeoutMs: 5000, keepAliveTimeoutMs: 60_000 });
    await http.getJson('/x', '/x', undefined, signal);
    await sleep(800);
    expect(open(), 'still open 800 ms later').toBe(1);

    // The same timing again keeps the pool and its connection.
    const before = server.connections().accepted;
    http.retime({ timeoutMs: 5000, keepAliveTimeoutMs: 60_000 });
    await http.getJson('/x', '/x', undefined, signal);
    expect(server.connections().accepted).toBe(before);
  } finally {
    await http.destroy();
  }
});

it('gives requests the new timeout once retimed', async () => {
  const http = client(5000, 60_000);
  const signal = new AbortController().signal;
  try {
    expect(await http.getJson('/slow', '/slow', undefined, signal)).toEqual({ ok: true });
    http.retime({ timeoutMs: 100, keepAliveTimeoutMs: 60_000 });
    const error = await http.getJson('/slow', '/slow', undefined, signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isUpstreamError(error) && error.reason).toBe('timeout');
  } finally {
    await http.destroy();
  }
});
