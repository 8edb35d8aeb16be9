/** /probe and /sd: a memory read of one owned target, refusals, and http_sd JSON of the owned set. */
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { shardOf } from '../../src/fleet/shard.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { parseSamples, samples, value } from '../helpers/exposition.js';
import { findBinary, promtool } from '../helpers/promtool.js';
import { serverConfig } from '../helpers/runtime.js';
import { EXTERNAL_ADDRESS, fleetConfig, startExporter, stopExporters } from './helpers.js';

let sim: RunningSimulator;
let down: RunningSimulator;
beforeAll(async () => {
  [sim, down] = await Promise.all([startSimulator({ streams: 4, sessions: 10, clock: 'manual', churn: false, seed: 1 }), startSimulator({ streams: 1, clock: 'manual', churn: false, seed: 2 })]);
});
afterAll(async () => {
  await Promise.all([sim.close(), down.close()]);
});
afterEach(async () => {
  await stopExporters();
  down.faults.clear();
});

const NAMES = Array.from({ length: 9 }, (_, i) => `edge-${i}`);

describe('/probe', () => {
  test('serves one server: its cached series and its flussonic_up, without polling', async () => {
    down.faults.set('*', { status: 503 });
    const h = startExporter(fleetConfig([serverConfig('edge-1', sim.url), serverConfig('edge/2 "x"', sim.url), serverConfig('down', down.url)], {}, []));
    await h.exporter.pollOnce();
    const before = sim.requests.count();
    const probe = await h.get('/probe?target=edge-1');
    expect(probe.status).toBe(200);
    expect(probe.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const servers = new Set(parseSamples(probe.body).map((s) => s.labels.server));
    expect([...servers]).toEqual(['edge-1']);
    expect(value(probe.body, 'flussonic_up')).toBe(1);
    expect(samples(probe.body, 'flussonic_stream_alive').length).toBe(4);
    // The same series /metrics has for edge-1.
    const all = parseSamples((await h.get('/metrics')).body).filter((s) => s.labels.server === 'edge-1' && s.name.startsWith('flussonic_') && !s.name.startsWith('flussonic_exporter_'));
    expect(parseSamples(probe.body).length).toBe(all.length);
    expect(sim.requests.count()).toBe(before);
    // Asked for gzip (as Prometheus asks), the same text as one gzip member of the stated length.
    const gz = await h.exporter.app.inject({ method: 'GET', url: '/probe?target=edge-1', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(Number(gz.headers['content-length'])).toBe(gz.rawPayload.length);
    expect(gunzipSync(gz.rawPayload).toString('utf8')).toBe(probe.body);
    expect(Number(probe.headers['content-length'])).toBe(Buffer.byteLength(probe.body));

    // A name with a slash and quotes is a name like any other (percent-encoded in the query).
    const odd = await h.get(`/probe?target=${encodeURIComponent('edge/2 "x"')}`);
    expect(odd.status).toBe(200);
    expect(value(odd.body, 'flussonic_up', { server: 'edge/2 "x"' })).toBe(1);

    // A server whose poll failed: only flussonic_up 0.
    const failed = await h.get('/probe?target=down');
    expect(failed.status).toBe(200);
    expect(parseSamples(failed.body)).toEqual([{ name: 'flussonic_up', labels: { server: 'down' }, value: 0 }]);

    const tool = findBinary('promtool');
    if (tool) {
      const checked = promtool(tool, ['check', 'metrics'], probe.body);
      expect(checked.stdout + checked.stderr).toBe('');
    }
  });

  test('refuses URLs, host:port values it does not know, unknown names and missing targets', async () => {
    const h = startExporter(fleetConfig([serverConfig('edge-1', sim.url)], {}, []));
    const before = sim.requests.count();
    for (const target of [sim.url, `${sim.url}/streamer/api/v3/streams`, 'http://169.254.169.254/latest/meta-data', 'user:pw@edge-1', '//edge-1']) {
      const r = await h.get(`/probe?target=${encodeURIComponent(target)}`);
      expect(r.status, target).toBe(400);
      expect(r.body).toMatch(/never fetches URLs/);
      expect(r.body).not.toContain(target);
    }
    const unknown = await h.get(`/probe?target=${encodeURIComponent(new URL(sim.url).host)}`);
    expect(unknown.status).toBe(404);
    expect((await h.get('/probe?target=edge-9')).status).toBe(404);
    expect((await h.get('/probe')).status).toBe(400);
    expect((await h.get('/probe?target=')).status).toBe(400);
    expect((await h.get('/probe?target=edge-1&target=edge-2')).status).toBe(400);
    const post = await h.exporter.app.inject({ method: 'POST', url: '/probe?target=edge-1' });
    expect([post.statusCode, post.headers.allow]).toEqual([405, 'GET, HEAD']);
    // Nothing was fetched for any of them.
    expect(sim.requests.count()).toBe(before);
  });
});

describe('/sd', () => {
  test('lists the servers this shard owns, each pointing at /probe of this exporter', async () => {
    const config = fleetConfig(NAMES.map((n) => serverConfig(n, sim.url)), {}, []);
    const listed: string[][] = [];
    for (let shard = 0; shard < 3; shard++) {
      const h = startExporter(config, { shard, totalShards: 3 });
      const r = await h.get('/sd');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      const groups = JSON.parse(r.body) as { targets: string[]; labels: Record<string, string> }[];
      for (const g of groups) {
        expect(g.targets).toEqual(['exporter.test:9228']);
        expect(g.labels.__metrics_path__).toBe('/probe');
        expect(shardOf(g.labels.__param_target!, 3)).toBe(shard);
      }
      listed.push(groups.map((g) => g.labels.__param_target!));
      const page = (await h.get('/')).body;
      expect(page).toContain(`shard ${shard} of 3`);
      expect(page).toContain(`polling ${groups.length} of 9 servers`);
      const metrics = (await h.get('/metrics')).body;
      expect(value(metrics, 'flussonic_exporter_shard_info', { shard: String(shard), total_shards: '3' })).toBe(1);
      expect(value(metrics, 'flussonic_exporter_owned_targets', { kind: 'server' })).toBe(groups.length);
      // A server of another shard is not probed here, and the answer says whose it is.
      const other = NAMES.find((n) => shardOf(n, 3) !== shard)!;
      const r404 = await h.get(`/probe?target=${other}`);
      expect(r404.status).toBe(404);
      expect(r404.body).toContain(`belong to shard ${shardOf(other, 3)}`);
    }
    // Every server exactly once over the three shards.
    expect(listed.flat().sort()).toEqual([...NAMES].sort());

    const h = startExporter(config, { shard: 1, totalShards: 3 });
    const self = JSON.parse((await h.get('/sd?scrape=metrics')).body) as unknown;
    expect(self).toEqual([{ targets: ['exporter.test:9228'], labels: { __metrics_path__: '/metrics' } }]);
    expect((await h.get('/sd?scrape=other')).status).toBe(400);
  });
});

describe('/sd: one target per server, at the address this replica was given', () => {
  type Group = { targets: string[]; labels: Record<string, string> };

  test('labels each server\'s target with instance and server = its name, so each has its own up', async () => {
    const h = startExporter(fleetConfig(NAMES.map((n) => serverConfig(n, sim.url)), {}, []));
    const groups = JSON.parse((await h.get('/sd')).body) as Group[];
    expect(groups.map((g) => g.labels.__param_target).sort()).toEqual([...NAMES].sort());
    for (const g of groups) {
      expect(g.labels.instance).toBe(g.labels.__param_target);
      expect(g.labels.server).toBe(g.labels.__param_target);
    }
    // Prometheus tells targets apart by their labels after relabelling (instance, job, ...):
    // every server's target is distinct although all share this replica's address.
    expect(new Set(groups.map((g) => `${g.targets.join()} ${g.labels.instance}`)).size).toBe(NAMES.length);
  });

  test('never takes the address from the Host header: the configured one, else the connection\'s local address', async () => {
    const configured = startExporter(fleetConfig([serverConfig('edge-1', sim.url)], {}, []));
    for (const host of ['attacker.example:8080', 'evil.example', '127.0.0.1:1']) {
      const r = await configured.exporter.app.inject({ method: 'GET', url: '/sd', headers: { host } });
      const answer = JSON.parse(r.body) as Group[];
      expect(answer.flatMap((g) => g.targets)).toEqual([EXTERNAL_ADDRESS]);
      expect(r.body).not.toContain(host.split(':')[0]);
      const self = JSON.parse((await configured.exporter.app.inject({ method: 'GET', url: '/sd?scrape=metrics', headers: { host } })).body) as Group[];
      expect(self.flatMap((g) => g.targets)).toEqual([EXTERNAL_ADDRESS]);
    }

    // Without --web.external-address: the address and port the request came in on, over a real socket.
    const plain = startExporter(fleetConfig([serverConfig('edge-1', sim.url)], {}, []), undefined, null);
    await plain.exporter.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = plain.exporter.app.server.address() as { port: number };
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/sd', headers: { host: 'attacker.example:8080' } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve(text));
      });
      req.on('error', reject).end();
    });
    expect((JSON.parse(body) as Group[]).flatMap((g) => g.targets)).toEqual([`127.0.0.1:${port}`]);
    expect(body).not.toContain('attacker');
  });
});
