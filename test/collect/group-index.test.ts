/**
 * GroupIndex against a Map as the oracle: random groups added and withdrawn, with the index
 * growing and shrinking and keys that share long prefixes, must find exactly what the Map finds.
 */
import { describe, expect, it } from 'vitest';
import { GroupIndex, GroupTable, groupKey } from '../../src/collect/sessions-groups.js';
import { rng } from '../helpers/rng.js';

describe('GroupIndex', () => {
  it('finds exactly what a Map finds, through adds and removes that grow and shrink it', () => {
    const random = rng(7);
    const table = new GroupTable();
    const index = new GroupIndex(table);
    const oracle = new Map<string, number>();
    // Keys as the sessions collector makes them: stream, protocol and country, most alike.
    const keys = Array.from({ length: 4000 }, (_, i) => groupKey([`live/channel-${Math.floor(i / 4)}`, ['hls', 'dash', 'rtmp', 'webrtc'][i % 4]!, i % 7 === 0 ? 'DE' : '']));
    let largest = 0;
    for (let step = 0; step < 40_000; step++) {
      const key = keys[Math.floor(random() * keys.length)]!;
      // First mostly adds (growing to thousands of groups), then mostly removes (shrinking back).
      const adding = random() < (step < 20_000 ? 0.9 : 0.1);
      const known = oracle.get(key);
      if (adding && known === undefined) {
        const slot = table.add(key);
        index.add(slot);
        oracle.set(key, slot);
      } else if (!adding && known !== undefined) {
        index.remove(known);
        table.release(known);
        oracle.delete(key);
      }
      largest = Math.max(largest, oracle.size);
      if (step % 997 === 0) {
        for (const k of keys) expect(index.find(k), k).toBe(oracle.get(k) ?? -1);
        expect(index.size).toBe(oracle.size);
        expect(index.slots().sort((a, b) => a - b)).toEqual([...oracle.values()].sort((a, b) => a - b));
      }
    }
    expect(largest).toBeGreaterThan(2500);
    expect(oracle.size).toBeLessThan(1000);
    for (const k of keys) expect(index.find(k)).toBe(oracle.get(k) ?? -1);
    index.clear();
    expect([index.size, index.find(keys[0]!)]).toEqual([0, -1]);
  });
});
