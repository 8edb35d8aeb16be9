/**
 * Discovery through /cluster/peers against simulators: a seed whose peers are other simulator
 * instances on loopback ports. Servers appear and vanish with the peer list, keep the template's
 * credentials, failures keep the last good list, and the cluster_key canary reaches nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { ClusterPeersSource } from '../../src/config/types.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { serverConfig } from '../helpers/runtime.js';
import { samples, value } from '../helpers/exposition.js';
import { fleetConfig, startExporter, stopExporters, template } from './helpers.js';

const VIEW = { user: 'monitor', password: 'peer-view-Pa55' };
const CANARY = 'CLUSTER-KEY-CANARY-7f3a9c';
const CREDENTIALS = { kind: 'basic' as const, username: VIEW.user, password: VIEW.password };

let seed: RunningSimulator;
let peers: RunningSimulator[];
beforeAll(async () => {
  // A real clock: peer staleness compares the peers' stats time with the exporter's clock.
  const common = { streams: 3, sessions: 5, clock: 'real' as const, churn: false, viewAuth: VIEW };
  const sims = await Promise.all([0, 1, 2, 3].map((i) => startSimulator({ ...common, seed: i + 1, clusterKey: CANARY })));
  seed = sims[0]!;
  peers = sims.slice(1);
});
afterAll(async () => {
  await Promise.all([seed, ...peers].map((s) => s?.close()));
});
afterEach(async () => {
  await stopExporters();
  seed.faults.clear();
  seed.world.cluster.shape = '2025';
});

const source = (overrides: Partial<ClusterPeersSource> = {}): ClusterPeersSource => ({
  kind: 'cluster_peers',
  name: 'cluster',
  seeds: [seed.url],
  template: 'edge',
  refreshIntervalMs: 60_000,
  ...overrides,
});

function setPeers(count: number): void {
  seed.world.cluster.set(peers.slice(0, count).map((p, i) => ({ hostname: `peer-${i + 1}.example.net`, apiUrl: p.url })));
}

describe('cluster_peers discovery', () => {
  test('servers appear, vanish and keep the template credentials', async () => {
    setPeers(2);
    // Page size 1: the peers come over a cursor walk of several pages.
    const h = startExporter(fleetConfig([], { edge: template({ credentials: CREDENTIALS, pageSize: 1 }) }, [source()]));
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    let metrics = (await h.get('/metrics')).body;
    expect(samples(metrics, 'flussonic_up').map((s) => [s.labels.server, s.value]).sort()).toEqual([
      ['peer-1.example.net', 1],
      ['peer-2.example.net', 1],
    ]);
    // The peers demand view_auth: an up of 1 means the template's credentials were sent.
    expect(value(metrics, 'flussonic_exporter_discovery_targets', { source: 'cluster' })).toBe(2);
    const walk = seed.requests.entries().filter((r) => r.apiPath === '/cluster/peers');
    expect(walk.map((r) => [r.query.limit, r.query.select, r.query.cursor !== undefined])).toEqual([
      ['1', 'hostname,api_url', false],
      ['1', 'hostname,api_url', true],
    ]);

    setPeers(3);
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    metrics = (await h.get('/metrics')).body;
    expect(value(metrics, 'flussonic_up', { server: 'peer-3.example.net' })).toBe(1);

    setPeers(1);
    await h.exporter.refreshDiscovery();
    metrics = (await h.get('/metrics')).body;
    expect(samples(metrics, 'flussonic_up').map((s) => s.labels.server)).toEqual(['peer-1.example.net']);
    // Withdrawn: no series of the vanished peers remain, upstream or self.
    expect(metrics).not.toContain('peer-2.example.net');
    expect(metrics).not.toContain('peer-3.example.net');
  });

  test('a reload that changes the template keeps the discovered servers and applies the new settings', async () => {
    setPeers(2);
    const h = startExporter(fleetConfig([], { edge: template({ credentials: CREDENTIALS }) }, [source()]));
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    // Wrong credentials in the new template: still the same two servers, now failing with auth.
    h.exporter.reload(fleetConfig([], { edge: template({ credentials: { ...CREDENTIALS, password: 'wrong' } }) }, [source()]));
    await h.exporter.pollOnce();
    const metrics = (await h.get('/metrics')).body;
    expect(samples(metrics, 'flussonic_up').map((s) => [s.labels.server, s.value]).sort()).toEqual([
      ['peer-1.example.net', 0],
      ['peer-2.example.net', 0],
    ]);
    expect(value(metrics, 'flussonic_exporter_api_errors_total', { server: 'peer-1.example.net', endpoint: '/config/stats', reason: 'auth' })).toBeGreaterThan(0);
  });

  test('a failing seed keeps the last good list and is counted', async () => {
    setPeers(2);
    const h = startExporter(fleetConfig([], { edge: template({ credentials: CREDENTIALS }) }, [source()]));
    await h.exporter.refreshDiscovery();
    seed.faults.set('/cluster/peers', { status: 500 });
    seed.world.cluster.set([]);
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    const metrics = (await h.get('/metrics')).body;
    expect(samples(metrics, 'flussonic_up')).toHaveLength(2);
    expect(value(metrics, 'flussonic_exporter_discovery_failures_total', { source: 'cluster' })).toBe(1);
    expect(h.log.text()).toMatch(/discovery refresh failed, the last good list is kept/);
  });

  test('a static server wins over a discovered one of the same name, and the collision is logged', async () => {
    setPeers(2);
    const staticServer = serverConfig('peer-1.example.net', peers[2]!.url, { credentials: CREDENTIALS });
    const h = startExporter(fleetConfig([staticServer], { edge: template({ credentials: CREDENTIALS }) }, [source()]));
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    expect(peers[2]!.requests.count('/streamer/api/v3/config/stats')).toBeGreaterThan(0);
    expect(h.log.text()).toMatch(/peer-1\.example\.net.*skipped: the name is taken by a static server \(static servers win\)/);
    expect(samples((await h.get('/metrics')).body, 'flussonic_up')).toHaveLength(2);
  });

  test.each(['2025', '23.05'] as const)('the cluster collector exports the seed view (%s shape); cluster_key never leaves', async (shape) => {
    seed.world.cluster.shape = shape;
    seed.world.cluster.set([
      { hostname: 'peer-1.example.net', apiUrl: peers[0]!.url },
      { hostname: 'peer-2.example.net', apiUrl: peers[1]!.url, error: 'unreachable' },
      { hostname: 'peer-3.example.net', apiUrl: peers[2]!.url, statsAgeMs: 60_000 },
    ]);
    const seedServer = serverConfig('seed', seed.url, { credentials: CREDENTIALS, collectors: { streams: false, sessions: false, server: false, dvrs: false, cluster: true } });
    const h = startExporter(fleetConfig([seedServer], { edge: template({ credentials: CREDENTIALS }) }, [source()]));
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    const metrics = (await h.get('/metrics')).body;
    expect(value(metrics, 'flussonic_cluster_peers', { server: 'seed' })).toBe(3);
    // Stats a minute old, beyond the peer's 10 s stale_timeout: stale.
    expect(value(metrics, 'flussonic_cluster_peer_up', { server: 'seed', peer: 'peer-3.example.net' })).toBe(0);
    expect(value(metrics, 'flussonic_cluster_peer_up', { server: 'seed', peer: 'peer-1.example.net' })).toBe(1);
    expect(value(metrics, 'flussonic_cluster_peer_up', { server: 'seed', peer: 'peer-2.example.net' })).toBe(0);
    // Both shapes give clients and output traffic (total_clients / client_count, output_kbit / output_bitrate).
    const doc = seed.world.cluster.docs(seed.now())[0]!;
    const stats = doc.stats as Record<string, number>;
    expect(value(metrics, 'flussonic_cluster_peer_clients', { peer: 'peer-1.example.net' })).toBe(stats.total_clients ?? stats.client_count);
    expect(value(metrics, 'flussonic_cluster_peer_output_bytes_per_second', { peer: 'peer-1.example.net' })).toBe((stats.output_kbit ?? stats.output_bitrate)! * 125);
    expect(doc.cluster_key).toBe(CANARY);

    // The canary and the license text reach nothing the exporter shows.
    const pages = await Promise.all(['/metrics', '/', '/sd', '/probe?target=peer-1.example.net', '/sd?scrape=metrics'].map((u) => h.get(u)));
    for (const page of pages) {
      expect(page.body).not.toContain(CANARY);
      expect(page.body).not.toContain(stats.license_txt as unknown as string);
    }
    expect(h.log.text()).not.toContain(CANARY);
    expect(h.log.text()).not.toContain(VIEW.password);
  });
});
