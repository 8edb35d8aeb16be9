/** Area B: the operations log — records, portal isolation, filters, cursor, billing, generated activity. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type OperationRecord, type RunningSimulator } from '@flussonic-exporter/simulator';
import { getJson } from './http-client.js';

const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

async function ops(sim: RunningSimulator, key: string, params: Record<string, string> = {}) {
  return getJson(`${sim.url}/tv-management/api/v1/operations?${new URLSearchParams(params)}`, { headers: { 'x-auth-token': key } });
}

/** Follow `next` to the end; fails on a repeated cursor. */
async function all(sim: RunningSimulator, key: string, params: Record<string, string> = {}): Promise<{ records: OperationRecord[]; pages: number }> {
  const records: OperationRecord[] = [];
  const cursors = new Set<string>();
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await ops(sim, key, { ...params, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    records.push(...res.body.operations);
    cursor = res.body.next;
    if (cursor) {
      expect(cursors.has(cursor)).toBe(false);
      cursors.add(cursor);
    }
    expect(++pages).toBeLessThan(1000);
  } while (cursor);
  return { records, pages };
}

describe('operations log: scripted scenario', () => {
  let sim: RunningSimulator;
  const ids = { basic: 'pkg-basic', sport: 'pkg-sport', s1: 'sub-1', s2: 'sub-2' };
  beforeAll(async () => {
    sim = await startSimulator({
      clock: 'manual',
      startTime: T0 + 40 * DAY,
      streams: 0,
      sessions: 0,
      catenaHistory: false,
      churn: false,
      catenaKeys: [
        { key: 'key-acme', portal: 'acme' },
        { key: 'key-other', portal: 'other' },
      ],
    });
    const c = sim.world.catena;
    const pkg = (id: string, name: string, t: number) => c.add({ type: 'createPackage', portalId: 'acme', packageId: id, createdAt: t, payload: { packageId: id, packageName: name } });
    const sub = (id: string, name: string, t: number) => c.add({ type: 'createSubscriber', portalId: 'acme', subscriberId: id, createdAt: t, payload: { subscriberId: id, name, phone: '+15550000000' } });
    const link = (type: 'createPackageSubscriber' | 'deletePackageSubscriber', s: string, p: string, t: number) =>
      c.add({ type, portalId: 'acme', subscriberId: s, packageId: p, createdAt: new Date(t).toISOString(), payload: { subscriberId: s, packageId: p, packageName: p } });
    pkg(ids.basic, 'Basic', T0);
    pkg(ids.sport, 'Sport', T0);
    sub(ids.s1, 'Anna', T0 + 1 * MIN);
    sub(ids.s2, 'Boris', T0 + 2 * MIN);
    link('createPackageSubscriber', ids.s1, ids.basic, T0 + 1 * HOUR);
    link('createPackageSubscriber', ids.s1, ids.sport, T0 + 2 * HOUR);
    link('createPackageSubscriber', ids.s2, ids.basic, T0 + 3 * HOUR);
    link('deletePackageSubscriber', ids.s1, ids.sport, T0 + 2 * HOUR + 10 * DAY);
    // Boris leaves: his subscription is cancelled, then he is deleted.
    link('deletePackageSubscriber', ids.s2, ids.basic, T0 + 3 * HOUR + 15 * DAY);
    c.add({ type: 'deleteSubscriber', portalId: 'acme', subscriberId: ids.s2, createdAt: T0 + 3 * HOUR + 15 * DAY + 1, payload: { subscriberId: ids.s2, name: 'Boris' } });
    // Another portal, another business.
    c.add({ type: 'createSubscriber', portalId: 'other', subscriberId: 'x-1', createdAt: T0 + 5 * MIN, payload: { subscriberId: 'x-1', name: 'Xena' } });
    c.add({ type: 'createPackageSubscriber', portalId: 'other', subscriberId: 'x-1', packageId: ids.basic, createdAt: T0 + 6 * MIN, payload: { subscriberId: 'x-1', packageId: ids.basic } });
  });
  afterAll(() => sim.close());

  it('serves records exactly as section 2.10 describes them', async () => {
    const { records } = await all(sim, 'key-acme');
    expect(records).toHaveLength(10);
    for (const r of records) {
      expect(Object.keys(r).sort()).toEqual(['createdAt', 'operationId', 'packageId', 'payload', 'portalId', 'subscriberId', 'type', 'updatedAt']);
      expect(r.operationId).toMatch(/^[A-Za-z0-9_-]{11}\.$/);
      expect(r.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(r.updatedAt).toBe(r.createdAt);
      expect(r.portalId).toBe('acme');
    }
    const pkgOp = records.find((r) => r.type === 'createPackage')!;
    expect(pkgOp.subscriberId).toBeNull();
    expect(pkgOp.payload).toEqual({ packageId: pkgOp.packageId, packageName: 'Basic' });
    const subOp = records.find((r) => r.type === 'createSubscriber')!;
    expect(subOp.packageId).toBeNull();
  });

  it('sorts by createdAt, then operationId', async () => {
    const { records } = await all(sim, 'key-acme', { limit: '3' });
    const keys = records.map((r) => [Date.parse(r.createdAt), r.operationId] as const);
    const sorted = [...keys].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    expect(keys).toEqual(sorted);
  });

  it('shows each portal only its own records', async () => {
    const acme = (await all(sim, 'key-acme')).records;
    const other = (await all(sim, 'key-other')).records;
    expect(acme.every((r) => r.portalId === 'acme')).toBe(true);
    expect(other.map((r) => r.subscriberId)).toEqual(['x-1', 'x-1']);
    expect(other.every((r) => r.portalId === 'other')).toBe(true);
  });

  it('filters by a comma list of types', async () => {
    const { records } = await all(sim, 'key-acme', { type: 'createPackageSubscriber,deletePackageSubscriber' });
    expect(records.map((r) => r.type).sort()).toEqual(['createPackageSubscriber', 'createPackageSubscriber', 'createPackageSubscriber', 'deletePackageSubscriber', 'deletePackageSubscriber']);
  });

  it('createdAt_gte is inclusive, createdAt_lt exclusive', async () => {
    const at = new Date(T0 + 2 * HOUR).toISOString();
    const from = (await all(sim, 'key-acme', { createdAt_gte: at })).records;
    expect(from[0]!.createdAt).toBe(at);
    const before = (await all(sim, 'key-acme', { createdAt_lt: at })).records;
    expect(before.every((r) => r.createdAt < at)).toBe(true);
    expect(from.length + before.length).toBe(10);
  });

  it('filters by subscriberId and by packageId', async () => {
    const s1 = (await all(sim, 'key-acme', { subscriberId: ids.s1 })).records;
    expect(s1.map((r) => r.type)).toEqual(['createSubscriber', 'createPackageSubscriber', 'createPackageSubscriber', 'deletePackageSubscriber']);
    const sport = (await all(sim, 'key-acme', { packageId: ids.sport })).records;
    expect(sport.map((r) => r.type)).toEqual(['createPackage', 'createPackageSubscriber', 'deletePackageSubscriber']);
  });

  it('pages with limit and next; next is null on the last page', async () => {
    const first = await ops(sim, 'key-acme', { limit: '4' });
    expect(first.body.operations).toHaveLength(4);
    expect(typeof first.body.next).toBe('string');
    expect(first.body.prev).toBeNull();
    expect(first.body.estimated_count).toBe(10);
    const { pages, records } = await all(sim, 'key-acme', { limit: '4' });
    expect(pages).toBe(3);
    expect(new Set(records.map((r) => r.operationId)).size).toBe(10);
    const last = await ops(sim, 'key-acme', { limit: '10' });
    expect(last.body.next).toBeNull();
  });

  it('goes back a page with prev', async () => {
    const first = (await ops(sim, 'key-acme', { limit: '4' })).body;
    const second = (await ops(sim, 'key-acme', { limit: '4', cursor: first.next })).body;
    expect(second.prev).not.toBeNull();
    const back = (await ops(sim, 'key-acme', { limit: '4', cursor: second.prev })).body;
    expect(back.operations.map((r: OperationRecord) => r.operationId)).toEqual(first.operations.map((r: OperationRecord) => r.operationId));
    expect(back.prev).toBeNull();
  });

  it('rejects bad parameters with 400 naming them', async () => {
    for (const [params, parameter] of [
      [{ limit: 'ten' }, 'limit'],
      [{ createdAt_gte: 'yesterday' }, 'createdAt_gte'],
      [{ createdAt_lt: '2026-01-01' }, 'createdAt_lt'],
      [{ cursor: 'not-a-cursor' }, 'cursor'],
      [{ colour: 'red' }, 'colour'],
    ] as const) {
      const res = await ops(sim, 'key-acme', params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.body.errors[0].source.parameter).toBe(parameter);
    }
  });

  it('supports billing: revenue = (cancellation - creation) x price, computed by hand', async () => {
    // Prices are the client's: per 30 days.
    const price: Record<string, number> = { [ids.basic]: 9.99, [ids.sport]: 20 };
    const period = { createdAt_gte: new Date(T0).toISOString(), createdAt_lt: new Date(T0 + 30 * DAY).toISOString() };
    const cancels = (await all(sim, 'key-acme', { ...period, type: 'deletePackageSubscriber' })).records;
    let revenue = 0;
    for (const cancel of cancels) {
      const creations = (await all(sim, 'key-acme', { type: 'createPackageSubscriber', subscriberId: cancel.subscriberId!, packageId: cancel.packageId!, createdAt_lt: cancel.createdAt })).records;
      const created = creations[creations.length - 1]!;
      const ms = Date.parse(cancel.createdAt) - Date.parse(created.createdAt);
      revenue += (ms / (30 * DAY)) * price[cancel.packageId!]!;
    }
    // By hand: Sport for Anna 10 days at 20/30 days = 6.6667; Basic for Boris 15 days at 9.99/30 days = 4.995.
    // Anna's Basic is not cancelled in the period, so it is not billed yet.
    expect(revenue).toBeCloseTo(20 * (10 / 30) + 9.99 * (15 / 30), 9);
    expect(revenue).toBeCloseTo(11.661667, 5);
  });
});

describe('operations log: equal timestamps on page boundaries', () => {
  it('pages through many records sharing one createdAt, each exactly once, in operationId order', async () => {
    const sim = await startSimulator({ clock: 'manual', streams: 0, sessions: 0, catenaHistory: false, churn: false, catenaKeys: [{ key: 'k', portal: 'p' }] });
    try {
      const same = new Date(T0 + HOUR).toISOString();
      const added: OperationRecord[] = [];
      added.push(sim.world.catena.add({ type: 'createPackage', portalId: 'p', packageId: 'pk', createdAt: T0, payload: { packageId: 'pk', packageName: 'P' } }));
      for (let i = 0; i < 11; i++) added.push(sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: `s${i}`, createdAt: same, payload: { subscriberId: `s${i}`, name: `n${i}` } }));
      added.push(sim.world.catena.add({ type: 'createPackage', portalId: 'p', packageId: 'pk2', createdAt: T0 + 2 * HOUR, payload: { packageId: 'pk2', packageName: 'Q' } }));
      for (const limit of ['1', '2', '3', '4', '5']) {
        const { records } = await all(sim, 'k', { limit });
        expect(records.map((r) => r.operationId), `limit ${limit}`).toEqual(
          [...added].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.operationId < b.operationId ? -1 : 1)).map((r) => r.operationId),
        );
      }
      // An inclusive lower bound on the shared instant returns all of them again (the reader de-duplicates).
      expect((await all(sim, 'k', { createdAt_gte: same })).records).toHaveLength(12);
    } finally {
      await sim.close();
    }
  });
});

describe('operations log: generated history and live activity', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', startTime: T0, streams: 0, sessions: 0, seed: 4, catenaKeys: [{ key: 'k1', portal: 'p1' }, { key: 'k2', portal: 'p2' }] });
  });
  afterAll(() => sim.close());

  it('starts with several days of history', async () => {
    const { records } = await all(sim, 'k1', { limit: '500' });
    expect(records.length).toBeGreaterThan(500);
    const first = Date.parse(records[0]!.createdAt);
    const last = Date.parse(records[records.length - 1]!.createdAt);
    expect(T0 - first).toBeGreaterThanOrEqual(2.9 * DAY);
    expect(last).toBeLessThan(T0);
    expect(new Set(records.map((r) => r.type)).size).toBeGreaterThanOrEqual(7);
  });

  it('follows the meaning of the types', async () => {
    sim.advance(6 * HOUR);
    for (const key of ['k1', 'k2']) {
      const { records } = await all(sim, key, { limit: '1000' });
      const subscribers = new Map<string, Set<string>>(); // subscriber -> active packages
      const packages = new Set<string>();
      const deletedSubscribers = new Set<string>();
      for (const r of records) {
        const sub = r.subscriberId!;
        const pkg = r.packageId!;
        switch (r.type) {
          case 'createPackage':
            packages.add(pkg);
            break;
          case 'deletePackage':
            expect(packages.has(pkg)).toBe(true);
            for (const active of subscribers.values()) expect(active.has(pkg), 'package deleted while subscribed').toBe(false);
            packages.delete(pkg);
            break;
          case 'createSubscriber':
          case 'autoCreateSubscriber':
            expect(subscribers.has(sub)).toBe(false);
            expect(r.payload.name).toBeTruthy();
            subscribers.set(sub, new Set());
            break;
          case 'createPackageSubscriber':
            expect(subscribers.has(sub), 'subscription before the subscriber exists').toBe(true);
            expect(packages.has(pkg), 'subscription to a package that does not exist').toBe(true);
            subscribers.get(sub)!.add(pkg);
            break;
          case 'deletePackageSubscriber':
            expect(subscribers.get(sub)?.has(pkg), 'cancellation of a subscription that is not active').toBe(true);
            subscribers.get(sub)!.delete(pkg);
            break;
          case 'deleteSubscriber':
            expect(subscribers.get(sub)?.size, 'subscriber deleted with active subscriptions').toBe(0);
            subscribers.delete(sub);
            deletedSubscribers.add(sub);
            break;
          case 'disableSubscriber':
          case 'enableSubscriber':
            expect(subscribers.has(sub)).toBe(true);
            break;
          default:
            throw new Error(`unexpected type ${r.type}`);
        }
        if (r.type !== 'createPackage' && r.type !== 'deletePackage') expect(r.subscriberId).not.toBeNull();
        if (['createSubscriber', 'autoCreateSubscriber', 'deleteSubscriber'].includes(r.type)) expect(r.packageId).toBeNull();
        if (r.type.includes('Package')) expect(r.packageId).not.toBeNull();
        if (r.type === 'createPackage' || r.type === 'deletePackage') expect(r.subscriberId).toBeNull();
      }
      expect(deletedSubscribers.size).toBeGreaterThan(0);
    }
  });

  it('keeps growing as time moves, with records created in the new interval', async () => {
    const before = (await all(sim, 'k1', { limit: '1000' })).records;
    const now = sim.now();
    sim.advance(2 * HOUR);
    const fresh = (await all(sim, 'k1', { createdAt_gte: new Date(now).toISOString() })).records;
    expect(fresh.length).toBeGreaterThan(20);
    for (const r of fresh) {
      expect(Date.parse(r.createdAt)).toBeGreaterThanOrEqual(now);
      expect(Date.parse(r.createdAt)).toBeLessThanOrEqual(sim.now());
    }
    expect(before.some((r) => fresh.some((f) => f.operationId === r.operationId))).toBe(false);
  });

  it('lists the generated packages of a portal', () => {
    const pkgs = sim.world.catena.packages('p1');
    expect(pkgs.length).toBeGreaterThanOrEqual(2);
    for (const p of pkgs) expect(p.packageId).toMatch(/^[A-Za-z0-9_-]{11}\.$/);
  });
});
