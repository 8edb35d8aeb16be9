/**
 * Discovery is bounded: a list over a source's cap, or one that would pass the cap of all sources
 * together, is refused whole (the last good list stays, one error line naming the setting, a
 * counter); a discovered server whose address is loopback (without discovery.allow_loopback) is
 * refused at connect time, after name resolution, while a static server on 127.0.0.1 is polled.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { ClusterPeersSource, FileSdSource } from '../../src/config/types.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { serverConfig } from '../helpers/runtime.js';
import { samples, value } from '../helpers/exposition.js';
import { fleetConfig, startExporter, stopExporters, template } from './helpers.js';

let seed: RunningSimulator;
let peer: RunningSimulator;
let dir: string;
beforeAll(async () => {
  const common = { streams: 2, sessions: 2, clock: 'manual' as const, churn: false };
  [seed, peer] = await Promise.all([startSimulator({ ...common, seed: 1 }), startSimulator({ ...common, seed: 2 })]);
  dir = mkdtempSync(join(tmpdir(), 'discovery-bounds-'));
});
afterAll(async () => {
  await Promise.all([seed, peer].map((s) => s?.close()));
  rmSync(dir, { recursive: true, force: true });
});
afterEach(stopExporters);

const cluster: ClusterPeersSource = { kind: 'cluster_peers', name: 'cluster', seeds: [], template: 'edge', refreshIntervalMs: 60_000 };
const hostPort = (sim: RunningSimulator) => new URL(sim.url).host;

/** `count` peers, all served by the peer simulator under their own names. */
function setPeers(count: number): void {
  seed.world.cluster.set(Array.from({ length: count }, (_, i) => ({ hostname: `peer-${i + 1}.example.net`, apiUrl: peer.url })));
}

function fileSource(name: string, file: string): FileSdSource {
  return { kind: 'file_sd', name, files: [file], template: 'edge', refreshIntervalMs: 60_000 };
}

const upServers = (metrics: string) => samples(metrics, 'flussonic_up').map((s) => s.labels.server).sort();

describe('discovery caps', () => {
  test('a list over the source cap is refused whole: the last good list stays, one error line, a counter', async () => {
    setPeers(2);
    const h = startExporter(fleetConfig([], { edge: template() }, [{ ...cluster, seeds: [seed.url] }], { maxTargetsPerSource: 2 }));
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    expect(upServers((await h.get('/metrics')).body)).toEqual(['peer-1.example.net', 'peer-2.example.net']);

    setPeers(3);
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    const metrics = (await h.get('/metrics')).body;
    expect(upServers(metrics)).toEqual(['peer-1.example.net', 'peer-2.example.net']);
    expect(value(metrics, 'flussonic_exporter_discovery_refused_total', { source: 'cluster', reason: 'source_cap' })).toBe(1);
    expect(value(metrics, 'flussonic_exporter_discovery_failures_total', { source: 'cluster' })).toBe(0);
    expect(value(metrics, 'flussonic_exporter_discovery_targets', { source: 'cluster' })).toBe(2);
    const refusals = h.log.entries().filter((e) => e.level === 50 && String(e.msg).includes('discovery.max_targets_per_source'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ source: 'cluster', servers: 3, kept: 2 });
  });

  test('a list that would pass the cap of all sources together is refused (total_cap)', async () => {
    const a = join(dir, 'a.json');
    const b = join(dir, 'b.json');
    writeFileSync(a, JSON.stringify([{ targets: ['a1.example.net:80', 'a2.example.net:80'] }]));
    writeFileSync(b, JSON.stringify([{ targets: ['b1.example.net:80', 'b2.example.net:80'] }]));
    const h = startExporter(fleetConfig([], { edge: template() }, [fileSource('a', a), fileSource('b', b)], { maxTargets: 3 }));
    await h.exporter.refreshDiscovery();
    const metrics = (await h.get('/metrics')).body;
    // Whichever source answered second found room for one server only, and its list was refused.
    expect(value(metrics, 'flussonic_exporter_owned_targets', { kind: 'server' })).toBe(2);
    const refused = ['a', 'b'].map((source) => value(metrics, 'flussonic_exporter_discovery_refused_total', { source, reason: 'total_cap' }) ?? 0);
    expect(refused.sort()).toEqual([0, 1]);
    expect(h.log.text()).toMatch(/would pass discovery\.max_targets/);
  });
});

describe('discovered addresses', () => {
  test('loopback is refused at connect time (a literal and a name resolved to it); a static server on 127.0.0.1 is polled', async () => {
    const file = join(dir, 'loopback.json');
    const port = new URL(peer.url).port;
    writeFileSync(file, JSON.stringify([{ targets: [`127.0.0.1:${port}`], labels: { server: 'literal' } }, { targets: [`localhost:${port}`], labels: { server: 'by-name' } }]));
    const before = peer.requests.entries().length;
    const h = startExporter(fleetConfig([serverConfig('sidecar', seed.url)], { edge: template() }, [fileSource('inventory', file)], { allowLoopback: false }));
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    const metrics = (await h.get('/metrics')).body;
    expect(value(metrics, 'flussonic_up', { server: 'sidecar' })).toBe(1);
    expect(value(metrics, 'flussonic_up', { server: 'literal' })).toBe(0);
    expect(value(metrics, 'flussonic_up', { server: 'by-name' })).toBe(0);
    expect(value(metrics, 'flussonic_exporter_address_refused_total', { server: 'literal', range: 'loopback' })).toBeGreaterThan(0);
    expect(value(metrics, 'flussonic_exporter_address_refused_total', { server: 'by-name', range: 'loopback' })).toBeGreaterThan(0);
    // No request reached the discovered servers' simulator: refused before connecting.
    expect(peer.requests.entries().length).toBe(before);
    expect(h.log.text()).toMatch(/is loopback, refused for discovered servers \(set discovery\.allow_loopback: true/);
  });

  test('with discovery.allow_loopback a discovered server on 127.0.0.1 is polled', async () => {
    const file = join(dir, 'allowed.json');
    writeFileSync(file, JSON.stringify([{ targets: [hostPort(peer)], labels: { server: 'allowed' } }]));
    const h = startExporter(fleetConfig([], { edge: template() }, [fileSource('inventory', file)], { allowLoopback: true }));
    await h.exporter.refreshDiscovery();
    await h.exporter.pollOnce();
    expect(value((await h.get('/metrics')).body, 'flussonic_up', { server: 'allowed' })).toBe(1);
  });
});
