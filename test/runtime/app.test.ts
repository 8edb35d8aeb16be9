/**
 * The HTTP face (buildApp over the worker pool, requests by app.inject), with a streams collector
 * scripted here polled by a runtime on this thread (test/helpers/pool-exporter.ts): the metrics
 * response and its gzip, the landing page, health and readiness, 404 and 405.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { CollectorEntry } from '../../src/collect/types.js';
import { escapeHtml } from '../../src/serve/landing.js';
import { acceptsGzip } from '../../src/serve/exposition-reply.js';
import { familyByName } from '../../src/serve/catalogue.js';
import { poolExporter, scriptedChannels, type PoolExporter } from '../helpers/pool-exporter.js';
import { findBinary, promtool } from '../helpers/promtool.js';
import { captureLogger, exporterConfig, serverConfig } from '../helpers/runtime.js';
import { value } from '../helpers/exposition.js';

const execFileAsync = promisify(execFile);
const ALIVE = familyByName('flussonic_stream_alive');
const INFO = familyByName('flussonic_stream_info');
const PASSWORD = 'pa55-word-never-shown';

/** A streams collector with a hostile stream name and title: markup, quotes, a backslash, a newline. */
const table: CollectorEntry[] = [
  {
    name: 'streams',
    defaultEnabled: true,
    create: () => ({
      async collect({ out }) {
        out.add(ALIVE, ['plain'], true);
        out.add(ALIVE, ['<script>alert(1)</script>'], false);
        out.add(INFO, ['q"uo\\te', 'line\nbreak', 'config'], 1);
      },
    }),
  },
];

const running: PoolExporter[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
});

function setup(metricsPath = '/metrics') {
  const log = captureLogger();
  const exporter = poolExporter({
    config: exporterConfig(
      [
        // A URL with userinfo cannot come out of loadConfig(); the page must not show one anyway.
        serverConfig('<b>edge</b>', `http://monitor:${PASSWORD}@127.0.0.1:9`, { credentials: { kind: 'basic', username: 'monitor', password: PASSWORD } }),
      ],
      { metricsPath },
    ),
    logger: log.logger,
    version: '9.9.9-<test>',
    channels: scriptedChannels(log.logger, table),
    size: 1,
  });
  running.push(exporter);
  return { exporter, log, app: exporter.app };
}

describe('metrics endpoint', () => {
  it('serves the upstream exposition and the self-metrics as text 0.0.4', async () => {
    const { exporter, app } = setup();
    await exporter.pollOnce();
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
    expect(value(res.body, 'flussonic_stream_alive', { stream: 'plain' })).toBe(1);
    expect(value(res.body, 'flussonic_up', { server: '<b>edge</b>' })).toBe(1);
    expect(value(res.body, 'flussonic_exporter_build_info', { version: '9.9.9-<test>', nodejs_version: process.versions.node })).toBe(1);
    expect(res.body).toMatch(/^process_cpu_seconds_total /m);
    expect(res.body).toMatch(/^nodejs_heap_size_used_bytes /m);
  });

  it('answers gzip as one gzip member that gunzipSync and curl --compressed decode to the plain body', async () => {
    const { exporter, app } = setup();
    await exporter.pollOnce();
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: { 'accept-encoding': 'deflate, gzip;q=0.8' } });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toBe('Accept-Encoding');
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
    const payload = res.rawPayload;
    expect(countGzipMembers(payload)).toBe(1);
    const text = gunzipSync(payload).toString('utf8');
    // The self-metrics are inside the one member: a decoder that reads only the first gets them.
    expect(value(text, 'flussonic_stream_alive', { stream: 'plain' })).toBe(1);
    expect(value(text, 'flussonic_up', { server: '<b>edge</b>' })).toBe(1);
    // The same body as the plain answer, up to the process figures that move between two scrapes.
    const plain = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(withoutProcess(text)).toBe(withoutProcess(plain));

    const curl = findBinary('curl');
    if (!curl) return console.warn('skipping the curl half: curl is not installed');
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    const url = `http://127.0.0.1:${address.port}/metrics`;
    // Asynchronously: the server answering curl runs on this thread.
    const run = (args: string[]) => execFileAsync(curl, ['-sS', '--max-time', '10', ...args, url], { encoding: 'utf8' });
    const decoded = await run(['--compressed']);
    const again = await run([]);
    expect(withoutProcess(decoded.stdout)).toBe(withoutProcess(again.stdout));
    expect(decoded.stdout).toContain('flussonic_exporter_build_info{');
  });

  it('sends the same exposition as text and as gzip, across the many parts a large one is kept in', async () => {
    const many: CollectorEntry[] = [
      {
        name: 'streams',
        defaultEnabled: true,
        create: () => ({
          async collect({ out }) {
            for (let i = 0; i < 2000; i++) out.add(ALIVE, [`s${i}`], i % 2 === 0);
          },
        }),
      },
    ];
    const log = captureLogger();
    const exporter = poolExporter({
      config: exporterConfig([serverConfig('edge', 'http://127.0.0.1:9')]),
      logger: log.logger,
      version: 'test',
      channels: scriptedChannels(log.logger, many),
      size: 1,
    });
    running.push(exporter);
    await exporter.pollOnce();
    const upstreamLines = (text: string) => text.split('\n').filter((l) => l.includes('flussonic_stream_alive'));
    const plain = await exporter.app.inject({ method: 'GET', url: '/metrics' });
    const zipped = await exporter.app.inject({ method: 'GET', url: '/metrics', headers: { 'accept-encoding': 'gzip' } });
    expect(Number(plain.headers['content-length'])).toBe(plain.rawPayload.length);
    const lines = upstreamLines(plain.body);
    expect(lines).toHaveLength(2002); // HELP, TYPE and 2,000 samples
    expect(lines.at(-1)).toBe('flussonic_stream_alive{server="edge",stream="s1999"} 0');
    expect(upstreamLines(gunzipSync(zipped.rawPayload).toString('utf8'))).toEqual(lines);
  });

  it('sends the text when gzip is refused', async () => {
    const { app } = setup();
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: { 'accept-encoding': 'gzip;q=0, *' } });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body).toContain('# TYPE flussonic_exporter_build_info gauge');
  });

  it('passes promtool check metrics with no findings, hostile label values included', async (ctx) => {
    const bin = findBinary('promtool');
    if (!bin) return ctx.skip();
    const { exporter, app } = setup();
    await exporter.pollOnce();
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('stream="<script>alert(1)</script>"');
    const r = promtool(bin, ['check', 'metrics'], text);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('serves a configured metrics path and nothing at the default one', async () => {
    const { app } = setup('/custom/metrics');
    expect((await app.inject({ method: 'GET', url: '/custom/metrics' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });
});

describe('other endpoints', () => {
  it('answers /-/healthy with 200', async () => {
    const { app } = setup();
    const res = await app.inject({ method: 'GET', url: '/-/healthy' });
    expect(res.statusCode).toBe(200);
  });

  it('answers unknown paths with a short 404 and other methods with 405', async () => {
    const { app } = setup();
    const missing = await app.inject({ method: 'GET', url: '/nope?x=1' });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe('not found\n');
    for (const url of ['/metrics', '/', '/-/healthy', '/-/ready']) {
      const res = await app.inject({ method: 'POST', url, payload: 'x' });
      expect(res.statusCode, url).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    }
    expect((await app.inject({ method: 'HEAD', url: '/metrics' })).statusCode).toBe(200);
  });

  it('shows version, targets and their last poll on the landing page, escaped, with no secret', async () => {
    const { exporter, app, log } = setup();
    const before = await app.inject({ method: 'GET', url: '/' });
    expect(before.body).toContain('not polled yet');
    await exporter.pollOnce();
    const res = await app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('9.9.9-&lt;test&gt;');
    expect(res.body).toContain('&lt;b&gt;edge&lt;/b&gt;');
    expect(res.body).not.toContain('<b>edge</b>');
    expect(res.body).toMatch(/<td class="ok">ok<\/td><td>\d{4}-\d\d-\d\dT/);
    expect(res.body).toContain('href="/metrics"');
    for (const text of [res.body, (await app.inject({ method: 'GET', url: '/metrics' })).body, log.text()]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain('monitor:');
    }
  });
});

describe('helpers', () => {
  it('reads Accept-Encoding like a browser, curl and Prometheus send it', () => {
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip('GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0, *')).toBe(false);
    expect(acceptsGzip('x-gzip')).toBe(true);
  });

  it('escapes the five HTML metacharacters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

/** Gzip members in a buffer, found by walking member by member with the decoder's own framing. */
/** The exposition without prom-client's process_* and nodejs_* lines, which change from scrape to scrape. */
/** Without the figures that move between two scrapes: the process's, and the count of the scrapes themselves. */
function withoutProcess(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^(# (HELP|TYPE) )?((process|nodejs)_|flussonic_exporter_http_requests_total)/.test(l))
    .join('\n');
}

function countGzipMembers(buf: Buffer): number {
  let count = 0;
  let offset = 0;
  while (offset < buf.length) {
    expect(buf[offset]).toBe(0x1f);
    expect(buf[offset + 1]).toBe(0x8b);
    count++;
    // Find the next member start by trying each later magic position whose tail decodes cleanly.
    let next = buf.length;
    for (let i = offset + 18; i < buf.length - 1; i++) {
      if (buf[i] === 0x1f && buf[i + 1] === 0x8b && buf[i + 2] === 0x08) {
        try {
          gunzipSync(buf.subarray(offset, i));
          next = i;
          break;
        } catch {
          // not a member boundary: the bytes belong to compressed data
        }
      }
    }
    offset = next;
  }
  return count;
}
