/**
 * The operations collector against the simulator's operations log: a scripted scenario over two
 * portals whose every counter is worked out by hand, paging through equal timestamps, a failed
 * poll that changes nothing, and a wrong key.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CatenaConfig, CatenaPrice } from '../../src/config/types.js';
import { createExporter } from '../../src/exporter.js';
import { isUpstreamError, type UpstreamError } from '../../src/lib/errors.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { KNOWN_OPERATION_TYPES } from '../../src/catena/records.js';
import { LedgerHandoff } from '../../src/collect/operations.js';
import { CollectorHarness } from '../helpers/catena.js';
import { samples, value } from '../helpers/exposition.js';
import { findBinary, promtool } from '../helpers/promtool.js';
import { captureLogger, catenaConfig, exporterConfig, serverConfig } from '../helpers/runtime.js';

const T0 = Date.UTC(2026, 0, 1);
const S = 1000;
const MIN = 60 * S;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const KEY_NORTH = 'key-north-0123456789';
const KEY_SOUTH = 'key-south-0123456789';

const PRICES: ReadonlyMap<string, CatenaPrice> = new Map([
  ['k-basic', { amount: 9.99, perMs: 30 * DAY, currency: 'EUR' }],
  ['k-sport', { amount: 5, perMs: DAY, currency: 'USD' }],
]);

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({
    clock: 'manual',
    startTime: T0,
    streams: 3,
    sessions: 5,
    catenaHistory: false,
    churn: false,
    catenaKeys: [
      { key: KEY_NORTH, portal: 'north' },
      { key: KEY_SOUTH, portal: 'south' },
    ],
  });
});
afterAll(() => sim?.close());

const open: CollectorHarness[] = [];
function harness(name: string, overrides: Partial<CatenaConfig> = {}): CollectorHarness {
  const h = new CollectorHarness(catenaConfig(name, sim.url, { prices: PRICES, ...overrides }), sim);
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
  sim.faults.clear();
  sim.requests.clear();
  sim.world.catena.clear();
});

type Link = 'createPackageSubscriber' | 'deletePackageSubscriber';
function add(portalId: string, type: string, at: number, fields: { subscriberId?: string; packageId?: string; packageName?: string; operationId?: string } = {}): void {
  const { packageName, operationId, ...ids } = fields;
  sim.world.catena.add({ type, portalId, createdAt: at, ...ids, ...(operationId ? { operationId } : {}), payload: { ...ids, ...(packageName ? { packageName } : {}) } });
}
const link = (portal: string, type: Link, subscriberId: string, packageId: string, at: number, extra: { packageName?: string; operationId?: string } = {}) =>
  add(portal, type, at, { subscriberId, packageId, ...extra });

/** Advances the simulator's clock to `at` (the collectors' `now`). */
function clockTo(at: number): void {
  sim.advance(at - sim.now());
}

describe('operations collector: a scripted scenario over two portals', () => {
  it('exports every counter and billed amount as computed by hand', async (ctx) => {
    const north = harness('north', { apiKey: KEY_NORTH });
    const south = harness('south', { apiKey: KEY_SOUTH });
    const start = sim.now();

    // Before the exporter's horizon (start: now): a subscription cancelled long ago, and the one
    // that is still open. Neither is counted; the open one is found by a look-up when cancelled.
    link('north', 'createPackageSubscriber', 's-old', 'k-basic', start - 40 * DAY);
    link('north', 'deletePackageSubscriber', 's-old', 'k-basic', start - 35 * DAY);
    link('north', 'createPackageSubscriber', 's-old', 'k-basic', start - 10 * DAY);

    // Poll 1: nothing since the horizon, no portal known yet: no series at all.
    expect(await north.poll()).toBe('');
    expect(await south.poll()).toBe('');

    add('north', 'createPackage', start + 1 * MIN, { packageId: 'k-basic', packageName: 'Basic' });
    add('north', 'createPackage', start + 1 * MIN, { packageId: 'k-sport', packageName: 'Sport' });
    add('north', 'createSubscriber', start + 2 * MIN, { subscriberId: 's1' });
    link('north', 'createPackageSubscriber', 's1', 'k-basic', start + 3 * MIN);
    link('north', 'createPackageSubscriber', 's1', 'k-sport', start + 3 * MIN);
    add('south', 'createSubscriber', start + 10 * MIN, { subscriberId: 'sA' });
    add('south', 'autoCreateSubscriber', start + 10 * MIN, { subscriberId: 'sB' });
    link('south', 'createPackageSubscriber', 'sB', 'k-basic', start + 20 * MIN, { packageName: 'Basic South' });
    clockTo(start + 30 * MIN);
    await north.poll();
    await south.poll();

    link('north', 'deletePackageSubscriber', 's1', 'k-sport', start + 1 * HOUR); // 57 min
    link('north', 'deletePackageSubscriber', 's-old', 'k-basic', start + 2 * HOUR); // looked up: 10 d + 2 h
    add('north', 'disableSubscriber', start + 2 * HOUR, { subscriberId: 's1' });
    add('north', 'enableSubscriber', start + 3 * HOUR, { subscriberId: 's1' });
    link('north', 'deletePackageSubscriber', 's-ghost', 'k-sport', start + 3 * HOUR, { operationId: 'ghost-cancel' }); // no creation anywhere
    add('north', 'renamePortal', start + 4 * HOUR);
    link('north', 'createPackageSubscriber', 's2', 'k-basic', start + 4 * HOUR); // opened and closed
    link('north', 'deletePackageSubscriber', 's2', 'k-basic', start + 4 * HOUR); // in the same ms: 0 s
    clockTo(start + 5 * HOUR);
    sim.requests.clear();
    await north.poll();
    // Two cancellations had no creation in memory: each subscriber looked up once, bounded by the horizon.
    const lookups = sim.requests.entries().filter((r) => r.query.type !== undefined);
    expect(lookups.map((r) => `${r.query.type} ${r.query.subscriberId} <${r.query.createdAt_lt}`).sort()).toEqual([
      `createPackageSubscriber s-ghost <${new Date(start).toISOString()}`,
      `createPackageSubscriber s-old <${new Date(start).toISOString()}`,
    ]);

    link('north', 'createPackageSubscriber', 's1', 'k-sport', start + 1 * DAY);
    link('north', 'deletePackageSubscriber', 's1', 'k-basic', start + 1 * DAY + 30 * MIN); // 1 d 27 min
    link('north', 'deletePackageSubscriber', 's1', 'k-sport', start + 2 * DAY); // 1 d
    add('north', 'deleteSubscriber', start + 2 * DAY + 1, { subscriberId: 's1' });
    add('north', 'deletePackage', start + 2 * DAY + 2, { packageId: 'k-sport', packageName: 'Sport' });
    link('north', 'createPackageSubscriber', 's3', 'k-news', start + 2 * DAY + 3, { packageName: 'News' });
    link('north', 'deletePackageSubscriber', 's3', 'k-news', start + 2 * DAY + 3 + 3 * HOUR); // 3 h, no price
    link('south', 'deletePackageSubscriber', 'sB', 'k-basic', start + 1 * DAY + 20 * MIN); // 1 d
    clockTo(start + 3 * DAY);
    sim.requests.clear();
    const text = await north.poll();
    await south.poll();
    // The second poll of the same state adds nothing.
    expect(await north.poll()).toBe(text);

    const n = { catena: 'north', portal: 'north' };
    const ops = (operation: string) => value(text, 'flussonic_catena_operations_total', { ...n, operation });
    const expectedOps: Record<string, number> = {
      autoCreateSubscriber: 0,
      createSubscriber: 1,
      deleteSubscriber: 1,
      disableSubscriber: 1,
      enableSubscriber: 1,
      createPackageSubscriber: 5,
      deletePackageSubscriber: 7,
      createPackage: 2,
      deletePackage: 1,
      renamePortal: 1,
    };
    for (const [operation, count] of Object.entries(expectedOps)) expect(ops(operation), operation).toBe(count);
    expect(samples(text, 'flussonic_catena_operations_total')).toHaveLength(10);

    const pkg = (name: string, packageId: string) => value(text, name, { ...n, package: packageId });
    expect([pkg('flussonic_catena_subscriptions_created_total', 'k-basic'), pkg('flussonic_catena_subscriptions_created_total', 'k-sport'), pkg('flussonic_catena_subscriptions_created_total', 'k-news')]).toEqual([2, 2, 1]);
    expect([pkg('flussonic_catena_subscriptions_cancelled_total', 'k-basic'), pkg('flussonic_catena_subscriptions_cancelled_total', 'k-sport'), pkg('flussonic_catena_subscriptions_cancelled_total', 'k-news')]).toEqual([3, 3, 1]);
    const basicSeconds = (10 * DAY + 2 * HOUR) / S + 0 + (1 * DAY + 27 * MIN) / S; // 871200 + 0 + 88020
    const sportSeconds = (57 * MIN) / S + DAY / S; // 3420 + 86400
    expect(basicSeconds).toBe(959_220);
    expect(sportSeconds).toBe(89_820);
    expect(pkg('flussonic_catena_billed_seconds_total', 'k-basic')).toBe(959_220);
    expect(pkg('flussonic_catena_billed_seconds_total', 'k-sport')).toBe(89_820);
    expect(pkg('flussonic_catena_billed_seconds_total', 'k-news')).toBe(10_800);
    expect(value(text, 'flussonic_catena_billed_amount_total', { ...n, package: 'k-basic', currency: 'EUR' })).toBeCloseTo((959_220 * 9.99) / 2_592_000, 9); // 3.6970...
    expect(value(text, 'flussonic_catena_billed_amount_total', { ...n, package: 'k-sport', currency: 'USD' })).toBeCloseTo((89_820 * 5) / 86_400, 9); // 5.1979...
    expect(samples(text, 'flussonic_catena_billed_amount_total')).toHaveLength(2); // k-news has no price
    expect(value(text, 'flussonic_catena_unmatched_cancellations_total', { catena: 'north', portal: 'north' })).toBe(1);
    expect(value(text, 'flussonic_catena_last_operation_timestamp_seconds', n)).toBe((start + 2 * DAY + 3 + 3 * HOUR) / 1000);
    expect(samples(text, 'flussonic_catena_package_info').map((s) => `${s.labels.package}=${s.labels.name}`).sort()).toEqual(['k-basic=Basic', 'k-news=News', 'k-sport=Sport']);
    expect(samples(text, 'flussonic_catena_up')).toEqual([]); // the poller's
    expect(text).not.toContain('portal="south"');

    // No look-up in the last polls: every creation they cancel was seen.
    expect(sim.requests.entries().filter((r) => r.query.type !== undefined)).toEqual([]);
    // The unmatched cancellation was logged once, with its id and without the key.
    const unmatched = north.log.entries().filter((e) => e.operationId === 'ghost-cancel');
    expect(unmatched).toHaveLength(1);
    expect(unmatched[0]).toMatchObject({ level: 40, portal: 'north' });
    expect(north.log.text()).not.toContain(KEY_NORTH);

    const s = south.text;
    const sOps = (operation: string) => value(s, 'flussonic_catena_operations_total', { catena: 'south', portal: 'south', operation });
    for (const t of KNOWN_OPERATION_TYPES) expect(sOps(t), t).toBe({ createSubscriber: 1, autoCreateSubscriber: 1, createPackageSubscriber: 1, deletePackageSubscriber: 1 }[t as string] ?? 0);
    expect(value(s, 'flussonic_catena_billed_seconds_total', { portal: 'south', package: 'k-basic' })).toBe(86_400);
    expect(value(s, 'flussonic_catena_billed_amount_total', { portal: 'south', package: 'k-basic', currency: 'EUR' })).toBeCloseTo((86_400 * 9.99) / 2_592_000, 9);
    expect(value(s, 'flussonic_catena_unmatched_cancellations_total', { portal: 'south' })).toBe(0);
    expect(samples(s, 'flussonic_catena_package_info')).toEqual([{ name: 'flussonic_catena_package_info', labels: { catena: 'south', portal: 'south', package: 'k-basic', name: 'Basic South' }, value: 1 }]);

    const bin = findBinary('promtool');
    if (!bin) return ctx.skip();
    for (const out of [text, s]) {
      const r = promtool(bin, ['check', 'metrics'], out);
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    }
  });

  it('looks a creation from before the horizon up with type, subscriber and created_before filters', async () => {
    const h = harness('north', { apiKey: KEY_NORTH });
    const start = sim.now();
    link('north', 'createPackageSubscriber', 's-old', 'k-sport', start - 3 * DAY);
    link('north', 'createPackageSubscriber', 's-old', 'k-basic', start - 2 * DAY); // another package
    await h.poll();
    link('north', 'deletePackageSubscriber', 's-old', 'k-sport', start + HOUR);
    link('north', 'deletePackageSubscriber', 's-old', 'k-basic', start + HOUR);
    clockTo(start + 2 * HOUR);
    sim.requests.clear();
    const text = await h.poll();
    const lookups = sim.requests.entries().filter((r) => r.query.type !== undefined);
    expect(lookups.map((r) => r.query)).toEqual([{ type: 'createPackageSubscriber', subscriberId: 's-old', createdAt_lt: new Date(start).toISOString(), limit: '500' }]);
    expect(value(text, 'flussonic_catena_billed_seconds_total', { package: 'k-sport' })).toBe((3 * DAY + HOUR) / S);
    expect(value(text, 'flussonic_catena_billed_seconds_total', { package: 'k-basic' })).toBe((2 * DAY + HOUR) / S);
    expect(value(text, 'flussonic_catena_unmatched_cancellations_total', { portal: 'north' })).toBe(0);
  });
});

describe('operations collector: incremental reading', () => {
  it('counts every operation exactly once across pages and polls that split equal timestamps', async () => {
    const h = harness('north', { apiKey: KEY_NORTH, pageSize: 3 });
    const start = sim.now();
    await h.poll();
    const types = ['createSubscriber', 'enableSubscriber', 'disableSubscriber', 'renamePortal'];
    const expected = new Map<string, number>();
    let i = 0;
    const addAt = (at: number, n: number) => {
      for (let k = 0; k < n; k++, i++) {
        const type = types[i % types.length]!;
        add('north', type, at, { subscriberId: `s${i}` });
        expected.set(type, (expected.get(type) ?? 0) + 1);
      }
    };
    // 7 at one ms, 5 at the next second, 2 within that same second: pages of 3 cut through each group.
    addAt(start + 1000, 7);
    addAt(start + 2000, 5);
    addAt(start + 2500, 2);
    clockTo(start + 3000);
    sim.requests.clear();
    await h.poll();
    expect(sim.requests.count('/operations')).toBe(5); // 14 records, 3 per page
    // More at the newest millisecond already read (the inclusive bound), and later.
    addAt(start + 2500, 4);
    addAt(start + 2999, 1);
    addAt(start + 3001, 3);
    clockTo(start + 4000);
    sim.requests.clear();
    const text = await h.poll();
    expect(sim.requests.entries()[0]!.query.createdAt_gte).toBe(new Date(start + 2500).toISOString());
    await h.poll(); // and once more with nothing new

    const counted = samples(h.text, 'flussonic_catena_operations_total', { portal: 'north' }).filter((s) => s.value > 0);
    expect(Object.fromEntries(counted.map((s) => [s.labels.operation, s.value]))).toEqual(Object.fromEntries(expected));
    expect(counted.reduce((sum, s) => sum + s.value, 0)).toBe(22);
    expect(h.text).toBe(text);
    expect(value(text, 'flussonic_catena_last_operation_timestamp_seconds', { portal: 'north' })).toBe((start + 3001) / 1000);
  });

  it('changes nothing on a failed poll and resumes from the last good position', async () => {
    const h = harness('north', { apiKey: KEY_NORTH, pageSize: 2 });
    const start = sim.now();
    await h.poll();
    link('north', 'createPackageSubscriber', 's1', 'k-sport', start + MIN);
    link('north', 'deletePackageSubscriber', 's1', 'k-sport', start + 2 * MIN);
    add('north', 'createSubscriber', start + 3 * MIN, { subscriberId: 's9' });
    clockTo(start + 5 * MIN);
    // Part-way: the first page (2 of the 3 operations) arrives, the second fails.
    sim.faults.set('/operations', { status: 503, afterFirstPage: true });
    const midWalk = await h.poll().catch((e: unknown) => e);
    expect((midWalk as UpstreamError).reason).toBe('http');
    sim.faults.set('/operations', { status: 503 });
    const failure = await h.poll().catch((e: unknown) => e);
    expect(isUpstreamError(failure)).toBe(true);
    expect((failure as UpstreamError).reason).toBe('http');
    expect(h.text).toBe('');
    sim.faults.clear();
    const text = await h.poll();
    expect(value(text, 'flussonic_catena_operations_total', { operation: 'createPackageSubscriber' })).toBe(1);
    expect(value(text, 'flussonic_catena_operations_total', { operation: 'deletePackageSubscriber' })).toBe(1);
    expect(value(text, 'flussonic_catena_operations_total', { operation: 'createSubscriber' })).toBe(1);
    expect(value(text, 'flussonic_catena_billed_seconds_total', { package: 'k-sport' })).toBe(60);
    expect(value(text, 'flussonic_catena_billed_amount_total', { package: 'k-sport' })).toBeCloseTo((60 * 5) / 86_400, 12);
    expect(h.stats.errors).toEqual(Array(4).fill('/operations http')); // each failed attempt and its one retry
  });

  it('fails the poll when a billing look-up fails, and bills once when it is repeated', async () => {
    const h = harness('north', { apiKey: KEY_NORTH, pageSize: 2 });
    const start = sim.now();
    for (const daysAgo of [3, 2, 1]) link('north', 'createPackageSubscriber', 's-old', 'k-sport', start - daysAgo * DAY);
    await h.poll();
    link('north', 'deletePackageSubscriber', 's-old', 'k-sport', start + HOUR);
    add('north', 'createSubscriber', start + HOUR, { subscriberId: 's-new' });
    clockTo(start + 2 * HOUR);
    // The poll's own walk is one page; the look-up (3 creations, 2 per page) fails on its second.
    sim.faults.set('/operations', { status: 500, afterFirstPage: true });
    await expect(h.poll()).rejects.toMatchObject({ reason: 'http' });
    expect(h.text).toBe('');
    sim.faults.clear();
    const text = await h.poll();
    expect(value(text, 'flussonic_catena_operations_total', { operation: 'deletePackageSubscriber' })).toBe(1);
    expect(value(text, 'flussonic_catena_operations_total', { operation: 'createSubscriber' })).toBe(1);
    expect(value(text, 'flussonic_catena_billed_seconds_total', { package: 'k-sport' })).toBe((DAY + HOUR) / S);
    expect(value(text, 'flussonic_catena_unmatched_cancellations_total', { portal: 'north' })).toBe(0);
  });

  it('fails a walk whose cursor repeats with reason cursor_loop', async () => {
    const h = harness('north', { apiKey: KEY_NORTH, pageSize: 2 });
    const start = sim.now();
    for (let k = 0; k < 5; k++) add('north', 'createSubscriber', start + k, { subscriberId: `s${k}` });
    sim.faults.set('/operations', { repeatCursor: true });
    const failure = await h.poll().catch((e: unknown) => e);
    expect((failure as UpstreamError).reason).toBe('cursor_loop');
    expect(h.stats.errors).toContain('/operations cursor_loop');
  });
});

describe('operations collector: configuration reload', () => {
  it('hands its ledger to the collector that replaces it, so counting goes on without a state file', async () => {
    const handoff = new LedgerHandoff();
    const config = catenaConfig('north', sim.url, { apiKey: KEY_NORTH, prices: PRICES });
    const before = new CollectorHarness(config, sim, undefined, { handoff });
    open.push(before);
    const start = sim.now();
    await before.poll();
    link('north', 'createPackageSubscriber', 's1', 'k-sport', start + MIN);
    clockTo(start + 2 * MIN);
    await before.poll();
    await before.close();
    // Reloaded with another price; meanwhile the subscription is cancelled.
    link('north', 'deletePackageSubscriber', 's1', 'k-sport', start + 3 * MIN);
    clockTo(start + 4 * MIN);
    const after = new CollectorHarness({ ...config, prices: new Map([['k-sport', { amount: 1, perMs: MIN, currency: 'USD' }]]) }, sim, undefined, { handoff });
    open.push(after);
    sim.requests.clear();
    const text = await after.poll();
    expect(sim.requests.entries()[0]!.query.createdAt_gte).toBe(new Date(start + MIN).toISOString());
    expect(value(text, 'flussonic_catena_operations_total', { operation: 'createPackageSubscriber' })).toBe(1);
    expect(value(text, 'flussonic_catena_billed_seconds_total', { package: 'k-sport' })).toBe(120);
    expect(value(text, 'flussonic_catena_billed_amount_total', { package: 'k-sport', currency: 'USD' })).toBe(2);
    expect(value(text, 'flussonic_catena_unmatched_cancellations_total', { portal: 'north' })).toBe(0);
  });
});

describe('operations collector: wrong key', () => {
  it('fails the poll with reason auth, and the key is in no log line and no error', async () => {
    const wrongKey = 'wrong-key-4f9a2c7e';
    const h = harness('north', { apiKey: wrongKey });
    const failure = await h.poll().catch((e: unknown) => e);
    expect(isUpstreamError(failure)).toBe(true);
    expect((failure as UpstreamError).reason).toBe('auth');
    expect(h.stats.errors).toEqual(['/operations auth']);
    h.log.logger.error({ err: failure }, 'poll failed'); // as the poller logs it
    expect(h.log.text()).toContain('/operations');
    expect(h.log.text()).not.toContain(wrongKey);
    expect(String((failure as Error).message)).not.toContain(wrongKey);
  });

  it('sets flussonic_catena_up 0 in the exporter while the media servers are polled as usual', async () => {
    const wrongKey = 'wrong-key-77d1b0aa';
    const log = captureLogger();
    const exporter = createExporter({
      config: exporterConfig([serverConfig('edge-1', sim.url)], { catena: [catenaConfig('billing', sim.url, { apiKey: wrongKey }), catenaConfig('north', sim.url, { apiKey: KEY_NORTH })] }),
      logger: log.logger,
      version: 'test',
    });
    try {
      await exporter.pollOnce();
      const text = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(value(text, 'flussonic_catena_up', { catena: 'billing' })).toBe(0);
      expect(value(text, 'flussonic_catena_up', { catena: 'north' })).toBe(1);
      expect(value(text, 'flussonic_exporter_api_errors_total', { server: 'billing', endpoint: '/operations', reason: 'auth' })).toBe(1);
      expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
      expect(samples(text, 'flussonic_stream_alive', { server: 'edge-1' })).toHaveLength(3);
      expect(samples(text, 'flussonic_catena_operations_total', { catena: 'billing' })).toEqual([]);
      for (const out of [text, log.text()]) expect(out).not.toContain(wrongKey);
      expect(log.entries().some((e) => e.catena === 'billing' && Number(e.level) >= 40)).toBe(true);
    } finally {
      await exporter.stop();
    }
  });
});
