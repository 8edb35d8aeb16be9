/**
 * SessionIds against a Map as the oracle: random adds and removes of UUIDs and other ids, with
 * the table growing and shrinking, must find exactly what the Map finds.
 */
import { describe, expect, it } from 'vitest';
import { pack, SessionIds } from '../../src/collect/session-ids.js';
import { SessionTable } from '../../src/collect/session-table.js';
import { rng } from '../helpers/rng.js';

function uuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('SessionIds', () => {
  it('packs only canonical lowercase UUIDs, each to the 128 bits of its digits', () => {
    const w = new Int32Array(4);
    expect(pack('61893ba6-07b3-431b-b2f7-716ac1643953', w)).toBe(true);
    expect([...w].map((x) => (x >>> 0).toString(16).padStart(8, '0')).join('')).toBe('61893ba607b3431bb2f7716ac1643953');
    expect(pack('ffffffff-ffff-ffff-ffff-ffffffffffff', w)).toBe(true);
    expect([...w]).toEqual([-1, -1, -1, -1]);
    for (const other of ['61893BA6-07b3-431b-b2f7-716ac1643953', '61893ba6-07b3-431b-b2f7-716ac164395', '61893ba6007b3-431b-b2f7-716ac1643953', '61893ba6-07b3-431b-b2f7-716ac164395g', '', 'session-1', '{61893ba6-07b3-431b-b2f7-716ac16439}']) {
      expect(pack(other, w), other).toBe(false);
    }
  });

  // The ids' words in an array of their own, or in the records of a SessionTable (as the sessions
  // collector keeps them), whose slots come from the table and whose buffer is replaced as it grows.
  it.each(['own words', 'SessionTable records'])('finds exactly what a Map finds, through adds and removes that grow and shrink the table (%s)', (store) => {
    const random = rng(42);
    const table = store === 'own words' ? undefined : new SessionTable();
    const ids = new SessionIds(table);
    const oracle = new Map<string, number>();
    const slotOf = new Map<number, string>();
    const free: number[] = [];
    let nextSlot = 0;
    const newSlot = () => {
      if (table === undefined) return free.pop() ?? nextSlot++;
      const slot = table.add(0, 'hls', 0, 0, 0, 0);
      nextSlot = table.slots;
      return slot;
    };
    const freeSlot = (slot: number) => (table === undefined ? free.push(slot) : table.release(slot));
    const pool: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const r = random();
      // A mix of UUIDs, their upper-case spelling (another id) and other text.
      const u = uuid(random);
      pool.push(r < 0.8 ? u : r < 0.9 ? u.toUpperCase() : `session-${i}`);
    }
    for (let step = 0; step < 40_000; step++) {
      const id = pool[Math.floor(random() * pool.length)]!;
      // Phases: mostly adds, then mostly removes, then mixed, so the table grows, shrinks and churns.
      const phase = Math.floor(step / 10_000);
      const addBias = phase === 0 ? 0.8 : phase === 1 ? 0.2 : 0.5;
      const known = oracle.get(id);
      expect(ids.find(id)).toBe(known ?? -1);
      if (known === undefined && random() < addBias) {
        const slot = newSlot();
        ids.add(id, slot);
        oracle.set(id, slot);
        slotOf.set(slot, id);
      } else if (known !== undefined && random() >= addBias) {
        ids.remove(known);
        oracle.delete(id);
        slotOf.delete(known);
        freeSlot(known);
      }
      expect(ids.size).toBe(oracle.size);
    }
    for (const id of pool) expect(ids.find(id)).toBe(oracle.get(id) ?? -1);
    for (let slot = 0; slot < nextSlot; slot++) expect(ids.has(slot)).toBe(slotOf.has(slot));
    ids.clear();
    expect(ids.size).toBe(0);
    for (const id of pool) expect(ids.find(id)).toBe(-1);
  });

  // Growing by half from 4,096 words reaches lengths that are not a multiple of 4 (354,294 words
  // after ten steps), where a slot's four words once ran past the end (a RangeError at slot 88,573).
  it('keeps the words of 100,000 slots in an array of their own', () => {
    const random = rng(7);
    const ids = new SessionIds();
    const made: string[] = [];
    for (let slot = 0; slot < 100_000; slot++) {
      const id = uuid(random);
      ids.add(id, slot);
      made.push(id);
    }
    expect(ids.size).toBe(100_000);
    for (let slot = 0; slot < made.length; slot++) {
      if (ids.find(made[slot]!) !== slot) expect.fail(`slot ${slot}: found ${ids.find(made[slot]!)}`);
    }
  });
});
