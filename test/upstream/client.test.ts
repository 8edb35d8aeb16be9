/**
 * The Flussonic client and the shared upstream HTTP layer against a scripted HTTP server: the
 * cursor walk's query and guards, every failure reason, the retry rule, the accounting, and that
 * no credential ever shows up in an error. (The same client against the simulator:
 * test/runtime/exporter-sim.test.ts.)
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Credentials } from '../../src/config/types.js';
import { isUpstreamError, type UpstreamError } from '../../src/lib/errors.js';
import type { JsonObject, WalkOptions } from '../../src/flussonic/api.js';
import { authHeaders, collectionQuery, FlussonicClient } from '../../src/flussonic/client.js';
import { encodeQuery } from '../../src/upstream/http.js';
import { RecordedStats } from '../helpers/recorded-stats.js';
import { serverConfig } from '../helpers/runtime.js';
import { startScripted, type ScriptedAnswer, type ScriptedRequest, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const PASSWORD = 's3cret-Pa55word';
const TOKEN = 'tok-1234567890-bearer';
const BASIC: Credentials = { kind: 'basic', username: 'monitor', password: PASSWORD };

const upstreams: ScriptedUpstream[] = [];
const clients: FlussonicClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

async function setup(answer: (req: ScriptedRequest, index: number) => ScriptedAnswer, overrides: Parameters<typeof serverConfig>[2] = {}) {
  const upstream = await startScripted(answer);
  upstreams.push(upstream);
  const stats = new RecordedStats();
  const client = new FlussonicClient({
    config: serverConfig('edge-1', upstream.url, { credentials: BASIC, pageSize: 2, ...overrides }),
    stats,
    retryBackoffMs: 10,
  });
  clients.push(client);
  return { upstream, stats, client };
}

async function collect(client: FlussonicClient, options: WalkOptions = { select: ['name', 'stats.alive'], key: 'name' }, signal = AbortSignal_()): Promise<JsonObject[][]> {
  const pages: JsonObject[][] = [];
  for await (const page of client.walk('/streams', options, signal)) pages.push(page);
  return pages;
}
/** A signal that never fires. */
function AbortSignal_(): AbortSignal {
  return new AbortController().signal;
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (e) {
    if (isUpstreamError(e)) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

const streams = (...names: string[]) => names.map((name) => ({ name, stats: { alive: true } }));

describe('cursor walk', () => {
  it('sends limit, select, filters and sort on every page and follows next until null', async () => {
    const pages = [
      { streams: streams('a', 'b'), next: 'c1' },
      { streams: streams('c', 'd'), next: 'c2' },
      { streams: streams('e'), next: null },
    ];
    const { client, upstream, stats } = await setup((_req, i) => ({ json: pages[i] }));
    const got = await collect(client, { select: ['name', 'stats.alive'], key: 'name', filter: { 'stats.alive': 'true' }, sort: ['-name'] });
    expect(got.map((p) => p.map((s) => s.name))).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(upstream.requests.map((r) => r.path)).toEqual(Array(3).fill('/streamer/api/v3/streams'));
    const base = { limit: '2', select: 'name,stats.alive', 'stats.alive': 'true', sort: '-name' };
    expect(upstream.requests.map((r) => r.query)).toEqual([base, { ...base, cursor: 'c1' }, { ...base, cursor: 'c2' }]);
    expect(stats.requests).toEqual(['/streams 200', '/streams 200', '/streams 200']);
    expect(stats.errors).toEqual([]);
    expect(stats.bytes).toBeGreaterThan(100);
  });

  it('drops items already seen on an earlier page', async () => {
    const pages = [
      { streams: streams('a', 'b'), next: 'c1' },
      { streams: streams('b', 'c'), next: null },
    ];
    const { client } = await setup((_req, i) => ({ json: pages[i] }));
    const got = await collect(client);
    expect(got.map((p) => p.map((s) => s.name))).toEqual([['a', 'b'], ['c']]);
  });

  it('yields pages whole when the caller de-duplicates (dedupe: false)', async () => {
    const pages = [
      { streams: streams('a', 'b'), next: 'c1' },
      { streams: streams('b', 'c'), next: null },
    ];
    const { client } = await setup((_req, i) => ({ json: pages[i] }));
    const got = await collect(client, { select: ['name'], key: 'name', dedupe: false });
    expect(got.map((p) => p.map((s) => s.name))).toEqual([['a', 'b'], ['b', 'c']]);
  });

  it('without de-duplication, stops with cursor_loop on an empty page while next is set', async () => {
    const pages = [
      { streams: streams('a'), next: 'c1' },
      { streams: [], next: 'c2' },
    ];
    const { client, stats } = await setup((_req, i) => ({ json: pages[i] }));
    const e = await failure(collect(client, { select: ['name'], key: 'name', dedupe: false }));
    expect(e.reason).toBe('cursor_loop');
    expect(e.message).toContain('page 2 added no items');
    expect(stats.errors).toEqual(['/streams cursor_loop']);
  });

  it('stops with cursor_loop on a repeated cursor', async () => {
    const pages = [
      { streams: streams('a', 'b'), next: 'c1' },
      { streams: streams('c', 'd'), next: 'c1' },
    ];
    const { client, stats } = await setup((_req, i) => ({ json: pages[i] }));
    const e = await failure(collect(client));
    expect(e.kind).toBe('cursor_repeated');
    expect(e.reason).toBe('cursor_loop');
    expect(e.message).toMatch(/^edge-1 \/streams: page 2 .*\(repeated cursor\)$/);
    expect(stats.errors).toEqual(['/streams cursor_loop']);
  });

  it('stops with cursor_loop on a page that adds nothing new while next is set', async () => {
    const { client } = await setup((_req, i) => ({ json: { streams: streams('a', 'b'), next: `c${i}` } }));
    const e = await failure(collect(client));
    expect(e.reason).toBe('cursor_loop');
    expect(e.message).toContain('page 2 added no new items');
    expect(e.message).toContain('(no progress)');
  });

  it('stops with cursor_loop at the page cap of a walk that never ends', async () => {
    const { client, upstream } = await setup((_req, i) => ({ json: { streams: streams(`s${i}`), next: `c${i}` } }), { maxPages: 5 });
    const e = await failure(collect(client));
    expect(e.reason).toBe('cursor_loop');
    expect(e.message).toContain('page cap of 5 pages');
    expect(upstream.requests).toHaveLength(5);
  });

  it('rejects a page whose collection is not an array, or whose next is not a string', async () => {
    for (const json of [{ streams: { a: 1 } }, { streams: streams('a'), next: 7 }, { streams: [1, 2] }]) {
      const { client, stats } = await setup(() => ({ json }));
      const e = await failure(collect(client));
      expect(e.reason, JSON.stringify(json)).toBe('shape');
      expect(stats.errors).toEqual(['/streams shape']);
    }
  });
});

describe('bodies', () => {
  it('reads a body of ASCII only and one with UTF-8 characters alike, escaped or not', async () => {
    // JSON with every character past ASCII written as \uXXXX: the body is ASCII only.
    const escaped = (value: unknown) => JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    for (const name of ['plain/ch-1', 'Первый канал', 'café ☕', 'camera 🎥']) {
      for (const body of [JSON.stringify({ name }), escaped({ name })]) {
        const { client } = await setup(() => ({ body: Buffer.from(body, 'utf8') }));
        expect((await client.getJson('/config/stats', '/config/stats', AbortSignal_())).name).toBe(name);
      }
    }
  });
});

describe('failures', () => {
  it('maps 401 and 403 to auth, without retrying and without the credentials', async () => {
    for (const status of [401, 403]) {
      const { client, upstream, stats } = await setup(() => ({ status, json: { errors: [{ title: 'nope' }] } }));
      const e = await failure(client.getJson('/config/stats', '/config/stats', AbortSignal_()));
      expect(e.reason).toBe('auth');
      expect(e.status).toBe(status);
      expect(upstream.requests).toHaveLength(1);
      expect(stats.requests).toEqual([`/config/stats ${status}`]);
      expect(stats.errors).toEqual(['/config/stats auth']);
    }
  });

  it('maps a 5xx to http and retries it once', async () => {
    const { client, upstream, stats } = await setup(() => ({ status: 500, body: 'oops' }));
    const e = await failure(client.getJson('/config/stats', '/config/stats', AbortSignal_()));
    expect(e.reason).toBe('http');
    expect(e.message).toBe('edge-1 /config/stats: HTTP 500, expected 2xx');
    expect(upstream.requests).toHaveLength(2);
    expect(stats.requests).toEqual(['/config/stats 500', '/config/stats 500']);
    expect(stats.errors).toEqual(['/config/stats http', '/config/stats http']);
  });

  it('succeeds when the retry does', async () => {
    const { client, upstream } = await setup((_req, i) => (i === 0 ? { status: 502 } : { json: { ok: true } }));
    await expect(client.getJson('/config/stats', '/config/stats', AbortSignal_())).resolves.toEqual({ ok: true });
    expect(upstream.requests).toHaveLength(2);
  });

  it('does not retry a 404', async () => {
    const { client, upstream } = await setup(() => ({ status: 404 }));
    expect((await failure(client.getJson('/dvrs', '/dvrs', AbortSignal_()))).reason).toBe('http');
    expect(upstream.requests).toHaveLength(1);
  });

  it('maps a body that is not JSON, or truncated JSON, to invalid_json', async () => {
    for (const [body, kind] of [
      ['<html>proxy error</html>', 'not valid JSON'],
      ['{"streams":[{"name":"a"', 'truncated JSON'],
      ['', 'empty body'],
    ] as const) {
      const { client, stats } = await setup(() => ({ body }));
      const e = await failure(client.getJson('/config/stats', '/config/stats', AbortSignal_()));
      expect(e.reason).toBe('invalid_json');
      expect(e.message).toContain(kind);
      // The body's text stays out of the message.
      expect(e.message).not.toContain('proxy error');
      expect(stats.errors).toEqual(['/config/stats invalid_json', '/config/stats invalid_json']);
    }
  });

  it('maps a JSON body that is not an object to shape', async () => {
    const { client } = await setup(() => ({ json: [1, 2, 3] }));
    const e = await failure(client.getJson('/config/stats', '/config/stats', AbortSignal_()));
    expect(e.reason).toBe('shape');
    expect(e.message).toContain('expected a JSON object, got an array');
  });

  it('cuts off a body over the cap while it streams in, with or without Content-Length', async () => {
    const cap = 64 * 1024;
    const big = JSON.stringify({ streams: streams(...Array.from({ length: 5000 }, (_, i) => `stream-${i}`)) });
    expect(big.length).toBeGreaterThan(cap * 2);
    // Declared length: refused before reading.
    let s = await setup(() => ({ body: big }), { maxResponseBytes: cap });
    let e = await failure(s.client.getJson('/streams', '/streams', AbortSignal_()));
    expect(e.reason).toBe('too_large');
    expect(e.message).toContain(`Content-Length ${big.length}`);
    expect(s.upstream.requests).toHaveLength(1);
    // Chunked, endless: read up to the cap, then cut.
    s = await setup(
      () => (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(16 * 1024, 0x20);
        const pump = () => {
          while (res.write(chunk)) if (res.destroyed) return;
          res.once('drain', pump);
        };
        res.on('error', () => undefined);
        pump();
      },
      { maxResponseBytes: cap },
    );
    e = await failure(s.client.getJson('/streams', '/streams', AbortSignal_()));
    expect(e.reason).toBe('too_large');
    expect(e.message).toContain(`over the cap of ${cap} bytes`);
    expect(s.stats.bytes).toBeGreaterThan(cap);
    expect(s.stats.bytes).toBeLessThan(cap + 128 * 1024);
    expect(s.stats.errors).toEqual(['/streams too_large']);
  });

  it('times out a request that gets no answer, retries once, and counts code="error"', async () => {
    const { client, upstream, stats } = await setup(() => 'hang', { timeoutMs: 150 });
    const started = performance.now();
    const e = await failure(client.getJson('/config/stats', '/config/stats', AbortSignal_()));
    expect(e.reason).toBe('timeout');
    expect(e.message).toContain('no complete response within 150 ms');
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(upstream.requests).toHaveLength(2);
    expect(stats.requests).toEqual(['/config/stats error', '/config/stats error']);
    expect(stats.errors).toEqual(['/config/stats timeout', '/config/stats timeout']);
  });

  it('does not retry once the poll signal has fired, and says why it stopped', async () => {
    const { client, upstream } = await setup(() => 'hang', { timeoutMs: 5000 });
    const poll = new AbortController();
    const pending = failure(client.getJson('/config/stats', '/config/stats', poll.signal));
    await waitFor(() => upstream.requests.length === 1);
    poll.abort(new Error('poll deadline of 900 ms reached'));
    const e = await pending;
    expect(e.reason).toBe('timeout');
    expect(e.message).toContain('request aborted: poll deadline of 900 ms reached');
    expect(upstream.requests).toHaveLength(1);
  });

  it('maps a refused connection and a connection dropped mid-body to connection', async () => {
    const refused = await setup(() => ({ json: {} }));
    await refused.upstream.close();
    upstreams.splice(upstreams.indexOf(refused.upstream), 1);
    let e = await failure(refused.client.getJson('/config/stats', '/config/stats', AbortSignal_()));
    expect(e.reason).toBe('connection');
    expect(e.message).toContain('ECONNREFUSED');
    expect(refused.stats.requests).toEqual(['/config/stats error', '/config/stats error']);

    const dropped = await setup(() => (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"streams":[');
      setImmediate(() => res.socket?.destroy());
    });
    e = await failure(dropped.client.getJson('/streams', '/streams', AbortSignal_()));
    expect(e.reason).toBe('connection');
    expect(e.message).toContain('connection lost after 12 bytes of the body');
    expect(dropped.stats.requests).toEqual(['/streams 200', '/streams 200']);
  });
});

describe('credentials', () => {
  it('sends Basic and Bearer authorization, and nothing without credentials', async () => {
    for (const [credentials, expected] of [
      [BASIC, `Basic ${Buffer.from(`monitor:${PASSWORD}`).toString('base64')}`],
      [{ kind: 'bearer', token: TOKEN }, `Bearer ${TOKEN}`],
      [{ kind: 'none' }, undefined],
    ] as const) {
      const { client, upstream } = await setup(() => ({ json: {} }), { credentials });
      await client.getJson('/config/stats', '/config/stats', AbortSignal_());
      expect(upstream.requests[0]!.headers.authorization).toBe(expected);
    }
  });

  it('never puts a credential into an error, its cause or a log line of it', async () => {
    const header = authHeaders(BASIC).authorization!;
    const bearerHeader = authHeaders({ kind: 'bearer', token: TOKEN }).authorization!;
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
    const answers: ScriptedAnswer[] = [{ status: 401 }, { status: 500 }, { body: 'not json' }, 'hang', { json: [] }];
    for (const credentials of [BASIC, { kind: 'bearer', token: TOKEN } as const]) {
      for (const answer of answers) {
        const { client } = await setup(() => answer, { credentials, timeoutMs: 100 });
        const e = await failure(client.getJson('/config/stats', '/config/stats', AbortSignal_()));
        log.warn({ err: e }, e.message);
      }
    }
    const all = lines.join('\n');
    expect(all).toContain('HTTP 401');
    for (const secret of [PASSWORD, TOKEN, header, bearerHeader, header.slice('Basic '.length)]) expect(all).not.toContain(secret);
  });
});

describe('query building', () => {
  it('keeps commas literal and encodes the rest', () => {
    expect(encodeQuery({ select: 'name,stats.alive', name_like: 'a b&c', cursor: 'x/y=' })).toBe('?select=name,stats.alive&name_like=a%20b%26c&cursor=x%2Fy%3D');
    expect(encodeQuery(undefined)).toBe('');
  });

  it('orders limit, select, filters and sort, leaving out an empty select', () => {
    expect(collectionQuery(100, { select: [], key: 'id', filter: { proto: 'hls' } })).toEqual({ limit: '100', proto: 'hls' });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!condition()) throw new Error('condition not reached');
}
