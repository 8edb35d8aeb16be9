/**
 * The whole exporter (built-in collectors, Flussonic client, poller, app) against two embedded
 * simulators standing in for two Flussonic servers: what goes over the wire, how each upstream
 * failure is isolated to its server and recovered from, and that the complete /metrics output is
 * clean for promtool.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CatenaConfig, ServerConfig } from '../../src/config/types.js';
import { createExporter, type Exporter } from '../../src/exporter.js';
import { streamsSelect } from '../../src/collect/streams.js';
import { familiesOf } from '../../src/families/catalogue.js';
import { startSimulator, type Fault, type RunningSimulator } from '@flussonic-exporter/simulator';
import { findBinary, promtool } from '../helpers/promtool.js';
import { captureLogger, catenaConfig, exporterConfig, serverConfig, type CapturedLog } from '../helpers/runtime.js';
import { parseSamples, samples, value } from '../helpers/exposition.js';

const VIEW = { user: 'monitor', password: 'view-Pa55-secret' };
const CATENA_KEY = 'catena-key-secret';
const SELF_FAMILIES = new Set([...familiesOf('self').map((f) => f.name), 'flussonic_catena_up']);

let sim1: RunningSimulator;
let sim2: RunningSimulator;
beforeAll(async () => {
  [sim1, sim2] = await Promise.all([
    startSimulator({ streams: 20, sessions: 50, clock: 'manual', churn: false, seed: 1, shape: 'flat', catenaKeys: [{ key: CATENA_KEY, portal: 'portal-1' }] }),
    startSimulator({ streams: 12, sessions: 30, gpus: 2, clock: 'manual', churn: false, seed: 2, shape: 'nested', viewAuth: VIEW }),
  ]);
});
afterAll(async () => {
  await Promise.all([sim1?.close(), sim2?.close()]);
});

const running: Exporter[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
  for (const sim of [sim1, sim2]) {
    sim.faults.clear();
    sim.requests.clear();
  }
});

function servers(overrides: { edge1?: Partial<ServerConfig>; edge2?: Partial<ServerConfig> } = {}): ServerConfig[] {
  return [
    serverConfig('edge-1', sim1.url, { pageSize: 7, ...overrides.edge1 }),
    serverConfig('edge-2', sim2.url, { pageSize: 5, credentials: { kind: 'basic', username: VIEW.user, password: VIEW.password }, ...overrides.edge2 }),
  ];
}

function setup(list: ServerConfig[] = servers(), catena: CatenaConfig[] = []): { exporter: Exporter; log: CapturedLog; metrics: () => Promise<string> } {
  const log = captureLogger();
  const exporter = createExporter({ config: exporterConfig(list, { catena }), logger: log.logger, version: 'test' });
  running.push(exporter);
  const metrics = async () => (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
  return { exporter, log, metrics };
}

/** Upstream (non-self) samples of a server. */
function upstreamOf(text: string, server: string) {
  return parseSamples(text).filter((s) => s.labels.server === server && !SELF_FAMILIES.has(s.name));
}

describe('exporter against the simulator', () => {
  it('walks /streams page by page with limit and select on the wire', async () => {
    const { exporter, metrics } = setup();
    await exporter.pollOnce('edge-1');
    const walk = sim1.requests.entries().filter((r) => r.apiPath === '/streams');
    expect(walk).toHaveLength(3); // 20 streams, 7 per page
    const select = streamsSelect(servers()[0]!.families).join(',');
    for (const [i, r] of walk.entries()) {
      expect(r.method).toBe('GET');
      expect(r.query.limit).toBe('7');
      expect(r.query.select).toBe(select);
      expect(r.query.cursor === undefined).toBe(i === 0);
    }
    expect(walk[0]!.headers['user-agent']).toBe('flussonic-exporter/test');
    const text = await metrics();
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-1' })).toHaveLength(20);
    expect(value(text, 'flussonic_exporter_api_requests_total', { server: 'edge-1', endpoint: '/streams', code: '200' })).toBe(3);
    expect(value(text, 'flussonic_exporter_api_response_bytes_total', { server: 'edge-1', endpoint: '/streams' })).toBeGreaterThan(1000);
  });

  it('stops a walk whose cursor repeats, with reason cursor_loop', async () => {
    const { exporter, metrics, log } = setup();
    sim1.faults.set('/streams', { repeatCursor: true });
    await exporter.pollOnce('edge-1');
    const text = await metrics();
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(0);
    expect(value(text, 'flussonic_exporter_api_errors_total', { server: 'edge-1', endpoint: '/streams', reason: 'cursor_loop' })).toBe(1);
    const warn = log.entries().find((e) => e.level === 40 && e.collector === 'streams');
    expect(warn).toMatchObject({ server: 'edge-1', reason: 'cursor_loop' });
    expect(String(warn!.msg)).toContain('(repeated cursor)');
    // The walk stopped at the loop: page 1, page 2 (which pointed back), nothing more.
    expect(sim1.requests.count('/streams')).toBe(2);
  });

  const isolation: [string, Fault, string, Partial<ServerConfig>?][] = [
    ['HTTP 500', { status: 500 }, 'http'],
    ['a hang', { hang: true }, 'timeout', { timeoutMs: 150 }],
    ['invalid JSON', { malformedJson: true }, 'invalid_json'],
    ['401', { authReject: true }, 'auth'],
    ['a body cut off mid-transfer', { truncateBody: true }, 'connection'],
    ['a body over the cap', { oversizedBytes: 300_000 }, 'too_large', { maxResponseBytes: 100_000 }],
  ];
  for (const [what, fault, reason, edge2] of isolation) {
    it(`isolates ${what} to its server (reason ${reason}) and recovers when it ends`, async () => {
      const { exporter, metrics, log } = setup(servers({ edge2 }));
      await exporter.pollOnce();
      const healthy = await metrics();
      const edge1Before = upstreamOf(healthy, 'edge-1');
      expect(upstreamOf(healthy, 'edge-2').length).toBeGreaterThan(10);

      sim2.faults.set('*', fault);
      await exporter.pollOnce();
      let text = await metrics();
      expect(value(text, 'flussonic_up', { server: 'edge-2' })).toBe(0);
      expect(upstreamOf(text, 'edge-2')).toEqual([]);
      expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
      expect(upstreamOf(text, 'edge-1').length).toBe(edge1Before.length);
      const errors = samples(text, 'flussonic_exporter_api_errors_total', { server: 'edge-2', reason });
      expect(errors.reduce((sum, s) => sum + s.value, 0)).toBeGreaterThan(0);
      const failures = log.entries().filter((e) => e.level === 40 && e.server === 'edge-2' && e.reason === reason);
      expect(failures.length).toBeGreaterThan(0);

      sim2.faults.clear();
      await exporter.pollOnce();
      text = await metrics();
      expect(value(text, 'flussonic_up', { server: 'edge-2' })).toBe(1);
      expect(upstreamOf(text, 'edge-2').length).toBe(upstreamOf(healthy, 'edge-2').length);
      expect(log.text()).not.toContain(VIEW.password);
    });
  }

  it('drops a stream deleted upstream at the next poll', async () => {
    const { exporter, metrics } = setup();
    await exporter.pollOnce('edge-1');
    const victim = sim1.world.streams.names()[3]!;
    expect(samples(await metrics(), 'flussonic_stream_alive', { server: 'edge-1', stream: victim })).toHaveLength(1);
    try {
      expect(sim1.world.streams.delete(victim)).toBe(true);
      await exporter.pollOnce('edge-1');
      const text = await metrics();
      // Every per-stream family loses the stream; session counters of its past audience may stay.
      const streamSeries = text.split('\n').filter((l) => l.startsWith('flussonic_stream_'));
      expect(streamSeries.filter((l) => l.includes(`stream="${victim}"`))).toEqual([]);
      expect(samples(text, 'flussonic_stream_alive', { server: 'edge-1' })).toHaveLength(19);
    } finally {
      sim1.world.streams.put(victim, { name: victim });
    }
  });

  it('stop() aborts a request that hangs upstream and closes the pools promptly', async () => {
    const { exporter } = setup(servers({ edge1: { timeoutMs: 10_000 } }));
    sim1.faults.set('*', { hang: true });
    const poll = exporter.pollOnce('edge-1');
    // The first request leaves once the worker thread started (module loading: seconds on a loaded machine).
    for (let i = 0; i < 400 && sim1.requests.count() === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(sim1.requests.count()).toBeGreaterThan(0);
    const started = performance.now();
    await exporter.stop();
    // The bound for a clean stop is 5 s.
    expect(performance.now() - started).toBeLessThan(5000);
    await poll;
  });

  it('fails with auth on wrong credentials and never shows them', async () => {
    const wrong = 'wrong-Pa55-guess';
    const { exporter, metrics, log } = setup(servers({ edge2: { credentials: { kind: 'basic', username: VIEW.user, password: wrong } } }));
    await exporter.pollOnce('edge-2');
    const text = await metrics();
    expect(value(text, 'flussonic_up', { server: 'edge-2' })).toBe(0);
    expect(value(text, 'flussonic_exporter_api_requests_total', { server: 'edge-2', endpoint: '/config/stats', code: '401' })).toBe(1);
    const page = (await exporter.app.inject({ method: 'GET', url: '/' })).body;
    expect(page).toContain('HTTP 401');
    for (const out of [text, page, log.text()]) {
      expect(out).not.toContain(wrong);
      expect(out).not.toContain(Buffer.from(`${VIEW.user}:${wrong}`).toString('base64'));
    }
  });

  it('polls a Catena service beside the servers, keeping its counters through a failed poll', async () => {
    // The simulator's log goes back three days from its own (2026-01-01) clock: read all of it.
    const catena = catenaConfig('billing', sim1.url, { apiKey: CATENA_KEY, start: { kind: 'history', ms: 5 * 365 * 86_400_000 } });
    const { exporter, metrics, log } = setup(servers(), [catena]);
    await exporter.pollOnce();
    let text = await metrics();
    expect(value(text, 'flussonic_catena_up', { catena: 'billing' })).toBe(1);
    const counted = samples(text, 'flussonic_catena_operations_total', { catena: 'billing', portal: 'portal-1' });
    expect(counted.reduce((sum, s) => sum + s.value, 0)).toBeGreaterThan(0);
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'billing', collector: 'operations' })).toBe(1);
    expect(value(text, 'flussonic_exporter_api_requests_total', { server: 'billing', endpoint: '/operations', code: '200' })).toBeGreaterThan(0);

    sim1.faults.set('/operations', { status: 500 });
    await exporter.pollOnce('billing');
    text = await metrics();
    expect(value(text, 'flussonic_catena_up', { catena: 'billing' })).toBe(0);
    expect(samples(text, 'flussonic_catena_operations_total', { catena: 'billing', portal: 'portal-1' })).toEqual(counted);
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    expect(log.text()).not.toContain(CATENA_KEY);
  });

  it('keeps a Catena service\'s counters through a reload that changes its entry', async () => {
    const catena = catenaConfig('billing', sim1.url, { apiKey: CATENA_KEY, start: { kind: 'history', ms: 5 * 365 * 86_400_000 } });
    const { exporter, metrics } = setup(servers(), [catena]);
    await exporter.pollOnce('billing');
    const before = samples(await metrics(), 'flussonic_catena_operations_total', { catena: 'billing', portal: 'portal-1' });
    expect(before.reduce((sum, s) => sum + s.value, 0)).toBeGreaterThan(0);

    exporter.reload(exporterConfig(servers(), { catena: [{ ...catena, pageSize: catena.pageSize + 1 }] }));
    await exporter.pollOnce('billing');
    // Nothing new happened upstream: a reset would show fewer, a recount more.
    expect(samples(await metrics(), 'flussonic_catena_operations_total', { catena: 'billing', portal: 'portal-1' })).toEqual(before);
  });

  it('withdraws only the Catena service\'s self-metrics when it leaves, though a server has its name', async () => {
    const catena = catenaConfig('edge-1', sim1.url, { apiKey: CATENA_KEY, start: { kind: 'history', ms: 86_400_000 } });
    const { exporter, metrics } = setup(servers(), [catena]);
    await exporter.pollOnce();
    let text = await metrics();
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-1', collector: 'operations' })).toBe(1);
    expect(value(text, 'flussonic_catena_up', { catena: 'edge-1' })).toBe(1);

    exporter.reload(exporterConfig(servers(), { catena: [] }));
    await exporter.pollOnce('edge-2'); // settles the reload without polling edge-1 again
    text = await metrics();
    expect(samples(text, 'flussonic_exporter_collector_success', { server: 'edge-1', collector: 'operations' })).toEqual([]);
    expect(samples(text, 'flussonic_catena_up', { catena: 'edge-1' })).toEqual([]);
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-1', collector: 'streams' })).toBe(1);
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    expect(value(text, 'flussonic_exporter_api_requests_total', { server: 'edge-1', endpoint: '/streams', code: '200' })).toBeGreaterThan(0);
  });

  it('serves a /metrics that promtool check metrics accepts with no findings, for both stats shapes and Catena', async (ctx) => {
    const bin = findBinary('promtool');
    if (!bin) return ctx.skip();
    const catena = catenaConfig('billing', sim1.url, { apiKey: CATENA_KEY, start: { kind: 'history', ms: 5 * 365 * 86_400_000 } });
    const { exporter, metrics } = setup(servers(), [catena]);
    await exporter.pollOnce();
    const text = await metrics();
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    expect(value(text, 'flussonic_up', { server: 'edge-2' })).toBe(1);
    expect(value(text, 'flussonic_catena_up', { catena: 'billing' })).toBe(1);
    const r = promtool(bin, ['check', 'metrics'], text);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
