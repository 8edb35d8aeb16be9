import { describe, expect, it } from 'vitest';
import type { CatenaPrice } from '../../src/config/types.js';
import { emptyLedger, LedgerDraft, MAX_OPERATION_TYPES, subscriptionKey, type CreationLookup, type Ledger } from '../../src/catena/ledger.js';
import { KNOWN_OPERATION_TYPES, type Operation } from '../../src/catena/records.js';

const T0 = Date.UTC(2026, 0, 1);
const H = 3_600_000;
const DAY = 24 * H;

function op(id: string, type: string, atMs: number, fields: Partial<Operation> = {}): Operation {
  return { operationId: id, type, portalId: 'p1', subscriberId: 's1', packageId: 'k1', createdAtMs: atMs, packageName: undefined, ...fields };
}

const noLookup: CreationLookup = async () => {
  throw new Error('no look-up expected');
};

async function applyAll(ledger: Ledger, ops: Operation[], prices: ReadonlyMap<string, CatenaPrice> = new Map(), lookup = noLookup): Promise<LedgerDraft> {
  const d = new LedgerDraft(ledger, prices);
  for (const o of ops) await d.apply(o, lookup);
  d.advance(ops);
  d.commit();
  return d;
}

describe('ledger', () => {
  it('bills a cancellation against the latest open creation of the same portal, subscriber and package', async () => {
    const l = emptyLedger(T0);
    const prices = new Map([['k1', { amount: 30, perMs: 30 * DAY, currency: 'EUR' }]]);
    await applyAll(l, [op('a', 'createPackageSubscriber', T0 + H), op('b', 'createPackageSubscriber', T0 + 2 * H, { packageId: 'k2' }), op('c', 'deletePackageSubscriber', T0 + 2 * DAY + H)], prices);
    const k1 = l.portals.get('p1')!.packages.get('k1')!;
    expect(k1.billedSeconds).toBe(2 * 86_400);
    expect(k1.billedAmount.get('EUR')).toBeCloseTo(2, 10);
    expect(k1.cancelled).toBe(1);
    expect(l.open.has(subscriptionKey('p1', 's1', 'k1'))).toBe(false);
    expect(l.open.get(subscriptionKey('p1', 's1', 'k2'))).toEqual([T0 + 2 * H]);
  });

  it('matches a creation and cancellation of the same millisecond (zero seconds billed, not unmatched)', async () => {
    const l = emptyLedger(T0);
    await applyAll(l, [op('a', 'createPackageSubscriber', T0 + H), op('b', 'deletePackageSubscriber', T0 + H)]);
    expect(l.portals.get('p1')!.unmatched).toBe(0);
    expect(l.portals.get('p1')!.packages.get('k1')!.billedSeconds).toBe(0);
  });

  it('looks a creation from before the horizon up in the log, and uses it once only', async () => {
    const l = emptyLedger(T0);
    const asked: string[] = [];
    const lookup: CreationLookup = async (portal, subscriber, pkg) => {
      asked.push(`${portal}/${subscriber}/${pkg}`);
      return { operationId: 'old', createdAtMs: T0 - DAY };
    };
    const d = await applyAll(l, [op('x', 'deletePackageSubscriber', T0 + H), op('y', 'deletePackageSubscriber', T0 + 2 * H)], new Map(), lookup);
    expect(asked).toEqual(['p1/s1/k1', 'p1/s1/k1']);
    const p = l.portals.get('p1')!;
    expect(p.packages.get('k1')!.billedSeconds).toBe((DAY + H) / 1000);
    expect(p.unmatched).toBe(1);
    expect(d.unmatched.map((u) => u.operationId)).toEqual(['y']);
    expect(l.lookedUpCreations.has('old')).toBe(true);
  });

  it('counts a cancellation without creation as unmatched', async () => {
    const l = emptyLedger(T0);
    const d = await applyAll(l, [op('x', 'deletePackageSubscriber', T0 + H)], new Map(), async () => undefined);
    expect(l.portals.get('p1')!.unmatched).toBe(1);
    expect(l.portals.get('p1')!.packages.get('k1')!.billedSeconds).toBe(0);
    expect(d.unmatched).toEqual([{ operationId: 'x', portalId: 'p1', reason: 'no matching createPackageSubscriber found' }]);
  });

  it('exports known types from 0 for a portal once it is seen, and bounds the distinct types', async () => {
    const l = emptyLedger(T0);
    const extra = MAX_OPERATION_TYPES - KNOWN_OPERATION_TYPES.length;
    const ops = Array.from({ length: extra + 3 }, (_, i) => op(`u${i}`, `customType${i}`, T0 + i));
    await applyAll(l, ops);
    const counted = l.portals.get('p1')!.operations;
    for (const t of KNOWN_OPERATION_TYPES) expect(counted.get(t)).toBe(0);
    expect(counted.get('customType0')).toBe(1);
    expect(counted.get(`customType${extra - 1}`)).toBe(1);
    expect(counted.has(`customType${extra}`)).toBe(false);
    expect(counted.get('other')).toBe(3);
    expect([...counted.keys()].length).toBe(MAX_OPERATION_TYPES + 1);
  });

  it('leaves the ledger untouched when a poll is not committed', async () => {
    const l = emptyLedger(T0);
    await applyAll(l, [op('a', 'createPackageSubscriber', T0 + H)]);
    const before = JSON.stringify([...l.portals.get('p1')!.packages.get('k1')!.billedAmount, l.open.get(subscriptionKey('p1', 's1', 'k1')), l.position.ms]);
    const d = new LedgerDraft(l, new Map());
    await d.apply(op('b', 'deletePackageSubscriber', T0 + 2 * H), noLookup);
    await d.apply(op('c', 'createPackageSubscriber', T0 + 3 * H, { portalId: 'p2' }), noLookup);
    d.advance([op('c', 'createPackageSubscriber', T0 + 3 * H)]);
    expect(l.portals.has('p2')).toBe(false);
    expect(l.portals.get('p1')!.packages.get('k1')!.cancelled).toBe(0);
    expect(JSON.stringify([...l.portals.get('p1')!.packages.get('k1')!.billedAmount, l.open.get(subscriptionKey('p1', 's1', 'k1')), l.position.ms])).toBe(before);
  });

  it('keeps the ids of the newest millisecond as the boundary, adding to it while the bound stays', async () => {
    const l = emptyLedger(T0);
    await applyAll(l, [op('a', 'createSubscriber', T0 + 5), op('b', 'createSubscriber', T0 + 9), op('c', 'createSubscriber', T0 + 9)]);
    expect(l.position.ms).toBe(T0 + 9);
    expect([...l.position.ids].sort()).toEqual(['b', 'c']);
    const d = new LedgerDraft(l, new Map());
    expect(d.isNew(op('b', 'createSubscriber', T0 + 9))).toBe(false);
    expect(d.isNew(op('d', 'createSubscriber', T0 + 9))).toBe(true);
    expect(d.isNew(op('e', 'createSubscriber', T0 + 8))).toBe(false);
    await applyAll(l, [op('d', 'createSubscriber', T0 + 9)]);
    expect([...l.position.ids].sort()).toEqual(['b', 'c', 'd']);
  });
});
