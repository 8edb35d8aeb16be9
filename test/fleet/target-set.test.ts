/** The target set: static and discovered servers merged, collisions resolved and named, the shard filter applied. */
import { describe, expect, test } from 'vitest';
import { buildTargetSet } from '../../src/fleet/target-set.js';
import { shardOf } from '../../src/fleet/shard.js';
import { parseCli } from '../../src/cli.js';
import { catenaConfig, serverConfig } from '../helpers/runtime.js';
import { fleetConfig, template } from './helpers.js';

const edge = template({ credentials: { kind: 'basic', username: 'u', password: 'template-secret' }, pageSize: 7 });

describe('buildTargetSet', () => {
  test('discovered servers take the template settings with their own name and URL', () => {
    const config = fleetConfig([serverConfig('static-1', 'http://s1')], { edge }, []);
    const set = buildTargetSet(config, [{ source: 'cluster', template: 'edge', servers: [{ name: 'peer-a', url: 'http://pa', labels: {} }] }], { shard: 0, totalShards: 1 });
    expect(set.config.servers.map((s) => [s.name, s.url, s.pageSize, s.credentials.kind])).toEqual([
      ['static-1', 'http://s1', 1000, 'none'],
      ['peer-a', 'http://pa', 7, 'basic'],
    ]);
    expect(set.owned.map((t) => [t.name, t.source])).toEqual([
      ['static-1', 'static'],
      ['peer-a', 'cluster'],
    ]);
  });

  test('static wins by name and by URL, the first source wins between sources, and each loser is named', () => {
    const config = fleetConfig([serverConfig('edge-1', 'http://e1')], { edge }, []);
    const set = buildTargetSet(
      config,
      [
        { source: 'cluster', template: 'edge', servers: [{ name: 'edge-1', url: 'http://other', labels: {} }, { name: 'alias', url: 'http://e1', labels: {} }, { name: 'x', url: 'http://x1', labels: {} }] },
        { source: 'inventory', template: 'edge', servers: [{ name: 'x', url: 'http://x2', labels: { dc: 'a' } }] },
      ],
      { shard: 0, totalShards: 1 },
    );
    expect(set.config.servers.map((s) => [s.name, s.url])).toEqual([
      ['edge-1', 'http://e1'],
      ['x', 'http://x1'],
    ]);
    expect(set.collisions).toEqual([
      'server "edge-1" from discovery cluster skipped: the name is taken by a static server (static servers win)',
      'server "alias" from discovery cluster skipped: a static server has the same URL (static servers win)',
      'server "x" from discovery inventory skipped: the name is taken by discovery cluster (configured first)',
    ]);
    expect(set.collisions.join('\n')).not.toContain('template-secret');
  });

  test('each shard keeps the servers that hash to it; Catena stays on its shard', () => {
    const names = Array.from({ length: 30 }, (_, i) => `srv-${i}`);
    const config = { ...fleetConfig(names.map((n) => serverConfig(n, `http://${n}`)), {}, []), catena: [catenaConfig('billing', 'http://c'), catenaConfig('other', 'http://o', { shard: 2 })] };
    const seen: string[] = [];
    for (let shard = 0; shard < 3; shard++) {
      const set = buildTargetSet(config, [], { shard, totalShards: 3 });
      for (const s of set.config.servers) expect(shardOf(s.name, 3)).toBe(shard);
      seen.push(...set.config.servers.map((s) => s.name));
      expect(set.totalServers).toBe(30);
      expect(set.config.catena.map((c) => c.name)).toEqual(shard === 0 ? ['billing'] : shard === 2 ? ['other'] : []);
    }
    expect(seen.sort()).toEqual([...names].sort());
  });
});

describe('the sharding flags on the command line', () => {
  test('reach the run command, or stop with a usage error', () => {
    expect(parseCli(['--config', 'c.yaml', '--shard', '1', '--total-shards', '3'], {})).toMatchObject({ kind: 'run', shard: { shard: 1, totalShards: 3 } });
    expect(parseCli(['--config', 'c.yaml', '--shard-from-hostname', '--total-shards', '4'], { HOSTNAME: 'flussonic-exporter-3' })).toMatchObject({ shard: { shard: 3, totalShards: 4 } });
    expect(() => parseCli(['--config', 'c.yaml', '--shard', '3', '--total-shards', '3'], {})).toThrow(/--shard: shard must be an integer from 0 to 2/);
    expect(() => parseCli(['--config', 'c.yaml', '--shard-from-hostname', '--total-shards', '2'], { HOSTNAME: 'exporter' })).toThrow(/does not end in -<ordinal>/);
  });
});
