/** The ownership hash: stable across releases and replicas, evenly spread, minimal moves. */
import { describe, expect, test } from 'vitest';
import { fnv1a64 } from '../../src/lib/hash.js';
import { checkShardSpec, jumpHash, ordinalFromHostname, ownsCatena, shardFromFlags, shardOf } from '../../src/fleet/shard.js';

const names = Array.from({ length: 3000 }, (_, i) => `edge-${i}.example.net`);

describe('fnv1a64', () => {
  test('matches the published FNV-1a 64 test vectors', () => {
    // From the FNV reference (isthe.com/chongo/tech/comp/fnv): "", "a", "foobar".
    expect(fnv1a64('')).toBe(0xcbf29ce484222325n);
    expect(fnv1a64('a')).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64('foobar')).toBe(0x85944171f73967e8n);
  });
  test('hashes the UTF-8 bytes (a non-ASCII name is not its UTF-16 code units)', () => {
    expect(fnv1a64('é')).not.toBe(fnv1a64('\u00e9'.normalize('NFD')));
    expect(fnv1a64('é')).toBe(fnv1a64(Buffer.from([0xc3, 0xa9]).toString('utf8')));
  });
});

describe('shardOf', () => {
  test('is pinned: replicas of different releases must agree, so these values never change', () => {
    // Recorded from the first release of sharding; a change here re-shards every fleet.
    expect(['edge-0', 'edge-1', 'origin-1', 'peer.example.com'].map((n) => shardOf(n, 3))).toEqual([2, 1, 1, 2]);
    expect(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => shardOf(n, 5))).toEqual([3, 0, 4, 2, 4, 2, 0, 1]);
  });

  test('spreads names evenly over the shards', () => {
    for (const total of [2, 3, 5, 8]) {
      const counts = new Array<number>(total).fill(0);
      for (const name of names) counts[shardOf(name, total)]!++;
      const expected = names.length / total;
      for (const c of counts) expect(Math.abs(c - expected) / expected).toBeLessThan(0.08);
    }
  });

  test('growing from M to M+1 shards moves names only to the new shard, about 1/(M+1) of them', () => {
    for (const total of [1, 2, 3, 7]) {
      let moved = 0;
      for (const name of names) {
        const before = shardOf(name, total);
        const after = shardOf(name, total + 1);
        if (before !== after) {
          moved++;
          expect(after).toBe(total);
        }
      }
      expect(Math.abs(moved / names.length - 1 / (total + 1))).toBeLessThan(0.05);
    }
  });

  test('one shard owns everything; jumpHash stays within its buckets', () => {
    expect(names.every((n) => shardOf(n, 1) === 0)).toBe(true);
    for (let k = 0n; k < 500n; k++) {
      const b = jumpHash(k * 0x9e3779b97f4a7c15n & 0xffffffffffffffffn, 10);
      expect(b >= 0 && b < 10).toBe(true);
    }
  });
});


describe('shard flags', () => {
  test('--shard N --total-shards M', () => {
    expect(shardFromFlags({ shard: '2', totalShards: '3' })).toEqual({ shard: 2, totalShards: 3 });
    expect(shardFromFlags({})).toEqual({ shard: 0, totalShards: 1 });
  });
  test('--shard-from-hostname reads the StatefulSet ordinal', () => {
    expect(shardFromFlags({ fromHostname: true, totalShards: '3' }, 'flussonic-exporter-1')).toEqual({ shard: 1, totalShards: 3 });
    expect(ordinalFromHostname('web-12')).toBe(12);
  });
  test('wrong combinations say what is wrong', () => {
    expect(shardFromFlags({ shard: '3', totalShards: '3' })).toMatch(/--shard: shard must be an integer from 0 to 2/);
    expect(shardFromFlags({ shard: '1' })).toMatch(/needs --total-shards/);
    expect(shardFromFlags({ totalShards: '2' })).toMatch(/needs --shard N or --shard-from-hostname/);
    expect(shardFromFlags({ shard: '1', totalShards: '2', fromHostname: true })).toMatch(/exclude each other/);
    expect(shardFromFlags({ fromHostname: true, totalShards: '2' }, 'exporter')).toMatch(/does not end in -<ordinal>/);
    expect(shardFromFlags({ shard: 'x', totalShards: '2' })).toMatch(/--shard: expected an integer/);
    expect(checkShardSpec(0, 0)).toMatch(/total shards must be/);
  });
  test('Catena services stay on their configured shard (0 by default), wrapping around', () => {
    expect(ownsCatena({ shard: 0, totalShards: 3 }, 0)).toBe(true);
    expect(ownsCatena({ shard: 1, totalShards: 3 }, 0)).toBe(false);
    expect(ownsCatena({ shard: 1, totalShards: 3 }, 4)).toBe(true);
  });
});
