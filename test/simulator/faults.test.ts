/** Fault injection per endpoint, switched at run time; every fault observable by a client. */
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { getJson } from './http-client.js';

/** Raw GET that reports what arrived, also when the connection breaks. */
function rawGet(url: string, timeoutMs = 5000): Promise<{ status?: number; headers?: Record<string, unknown>; bytes: number; text: string; error?: string; complete: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const req = request(url, { agent: false }, (res) => {
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, bytes: Buffer.concat(chunks).length, text: Buffer.concat(chunks).toString(), complete: res.complete }));
      res.on('error', (e) => resolve({ status: res.statusCode, headers: res.headers, bytes: Buffer.concat(chunks).length, text: Buffer.concat(chunks).toString(), error: e.message, complete: false }));
      res.on('aborted', () => undefined);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('client timeout')));
    req.on('error', (e) => resolve({ bytes: Buffer.concat(chunks).length, text: Buffer.concat(chunks).toString(), error: e.message, complete: false }));
    req.end();
  });
}

describe('faults', () => {
  let sim: RunningSimulator;
  let api: string;
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', streams: 30, sessions: 300, catenaKeys: [{ key: 'k', portal: 'p' }] });
    api = `${sim.url}/streamer/api/v3`;
  });
  afterEach(() => sim.faults.clear());
  afterAll(() => sim.close());

  it('answers with a fixed status on one endpoint only, until cleared', async () => {
    sim.faults.set('/sessions', { status: 503 });
    const res = await getJson(`${api}/sessions`);
    expect(res.status).toBe(503);
    expect(res.body.errors[0].status).toBe('503');
    expect((await getJson(`${api}/streams`)).status).toBe(200);
    sim.faults.clear('/sessions');
    expect((await getJson(`${api}/sessions`)).status).toBe(200);
  });

  it("applies '*' to every endpoint, an endpoint's own fault over it", async () => {
    sim.faults.set('*', { status: 500 });
    sim.faults.set('/config/stats', { status: 502 });
    expect((await getJson(`${api}/streams`)).status).toBe(500);
    expect((await getJson(`${api}/dvrs`)).status).toBe(500);
    expect((await getJson(`${api}/config/stats`)).status).toBe(502);
    expect((await getJson(`${sim.url}/tv-management/api/v1/operations`, { headers: { 'x-auth-token': 'k' } })).status).toBe(500);
  });

  it('answers about the given share of requests with a 5xx', async () => {
    sim.faults.set('/streams', { errorRate: 0.5 });
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await getJson(`${api}/streams?limit=1`)).status);
    const errors = statuses.filter((s) => s >= 500);
    expect(errors.every((s) => [500, 502, 503].includes(s))).toBe(true);
    expect(errors.length).toBeGreaterThan(10);
    expect(errors.length).toBeLessThan(50);
    sim.faults.set('/streams', { errorRate: 1 });
    expect((await getJson(`${api}/streams`)).status).toBeGreaterThanOrEqual(500);
  });

  it('sends 200 with a body that is not JSON', async () => {
    sim.faults.set('/config/stats', { malformedJson: true });
    const res = await rawGet(`${api}/config/stats`);
    expect(res.status).toBe(200);
    expect(res.complete).toBe(true);
    expect(() => JSON.parse(res.text)).toThrow();
  });

  it('cuts a body off half-way with the full Content-Length announced', async () => {
    sim.faults.set('/streams', { truncateBody: true });
    const res = await rawGet(`${api}/streams`);
    expect(res.status).toBe(200);
    expect(res.complete).toBe(false);
    expect(res.bytes).toBeLessThan(Number(res.headers!['content-length']));
    await expect(fetch(`${api}/streams`).then((r) => r.json())).rejects.toThrow();
  });

  it('never answers a hung request, and close() releases it', async () => {
    const hungSim = await startSimulator({ clock: 'manual', streams: 1, sessions: 0 });
    hungSim.faults.set('/streams', { hang: true });
    const pending = rawGet(`${hungSim.url}/streamer/api/v3/streams`, 20_000);
    // The request is in the server once the log has it; then closing must end it quickly.
    await expect.poll(() => hungSim.requests.count('/streams'), { interval: 5, timeout: 2000 }).toBe(1);
    const t0 = Date.now();
    await hungSim.close();
    const res = await pending;
    expect(res.status).toBeUndefined();
    expect(res.error).toBeDefined();
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('answers a hung request never: the client times out', async () => {
    sim.faults.set('/dvrs', { hang: true });
    const res = await rawGet(`${api}/dvrs`, 150);
    expect(res.error).toBe('client timeout');
  });

  it('delays answers by latencyMs', async () => {
    sim.faults.set('/config/stats', { latencyMs: 120 });
    const t0 = performance.now();
    expect((await getJson(`${api}/config/stats`)).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(110);
  });

  it('repeats the request cursor as next, so a walk without a guard never ends', async () => {
    sim.faults.set('/sessions', { repeatCursor: true });
    const first = await getJson(`${api}/sessions?limit=10`);
    expect(first.body.next).toBeTruthy();
    const second = await getJson(`${api}/sessions?limit=10&cursor=${first.body.next}`);
    expect(second.body.next).toBe(first.body.next);
    const third = await getJson(`${api}/sessions?limit=10&cursor=${second.body.next}`);
    expect(third.body.sessions.map((s: any) => s.id)).toEqual(second.body.sessions.map((s: any) => s.id));
  });

  it('pads a body to an oversized length, chunked, still valid JSON', async () => {
    sim.faults.set('/config/stats', { oversizedBytes: 3_000_000 });
    const res = await rawGet(`${api}/config/stats`);
    expect(res.status).toBe(200);
    expect(res.headers!['content-length']).toBeUndefined();
    expect(res.headers!['transfer-encoding']).toBe('chunked');
    expect(res.bytes).toBe(3_000_000);
    expect(JSON.parse(res.text).total_streams).toBe(30);
  });

  it('rejects authentication whatever the credentials, on the operations log too', async () => {
    sim.faults.set('*', { authReject: true });
    expect((await getJson(`${api}/streams`)).status).toBe(401);
    expect((await getJson(`${sim.url}/tv-management/api/v1/operations`, { headers: { 'x-auth-token': 'k' } })).status).toBe(401);
  });

  it('rejects unknown fault names and endpoints', () => {
    expect(() => sim.faults.set('/streams', { nonsense: true } as never)).toThrow(/unknown fault/);
    expect(() => sim.faults.set('/nope' as never, {})).toThrow(/unknown endpoint/);
    expect(() => sim.faults.set('/streams', { errorRate: 2 })).toThrow(/errorRate/);
  });
});

describe('request log', () => {
  it('is bounded: the oldest records go first', async () => {
    const { RequestLog } = await import('@flussonic-exporter/simulator');
    const log = new RequestLog(3);
    for (let i = 0; i < 5; i++) log.add({ method: 'GET', path: `/p${i}`, apiPath: `/p${i}`, query: {}, headers: {}, time: i });
    expect(log.entries().map((r) => r.path)).toEqual(['/p2', '/p3', '/p4']);
  });

  it('records method, path, query and headers but never credentials', async () => {
    const sim = await startSimulator({ clock: 'manual', streams: 3, sessions: 5, viewAuth: { user: 'u', password: 'p' }, catenaKeys: [{ key: 'secret-key', portal: 'p' }] });
    try {
      await getJson(`${sim.url}/streamer/api/v3/sessions?limit=2&select=id,bytes`, { headers: { authorization: 'Basic ' + Buffer.from('u:p').toString('base64'), 'x-test': 'yes' } });
      await getJson(`${sim.url}/tv-management/api/v1/operations?limit=1`, { headers: { 'x-auth-token': 'secret-key' } });
      const [a, b] = sim.requests.entries();
      expect(a).toMatchObject({ method: 'GET', path: '/streamer/api/v3/sessions', apiPath: '/sessions', query: { limit: '2', select: 'id,bytes' } });
      expect(a!.headers['x-test']).toBe('yes');
      expect(b!.apiPath).toBe('/operations');
      expect(JSON.stringify(sim.requests.entries())).not.toMatch(/secret-key|Basic /);
      expect(sim.requests.count('/sessions')).toBe(1);
      expect(sim.requests.count('/streamer/api/v3/')).toBe(1);
      sim.requests.clear();
      expect(sim.requests.count()).toBe(0);
    } finally {
      await sim.close();
    }
  });
});
