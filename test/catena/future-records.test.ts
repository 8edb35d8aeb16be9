/**
 * One record dated far ahead (`createdAt: 2099-01-01`) must not stop the counting of the records
 * after it, nor be saved as the position in the state file: a record more than `max_clock_skew`
 * ahead is not counted, is counted as rejected and logged once. A state file whose position is in
 * the future (31 years, or just beyond the skew) is set aside like a corrupt one.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CatenaConfig } from '../../src/config/types.js';
import { emptyLedger } from '../../src/catena/ledger.js';
import { ledgerToJson, loadStateFile } from '../../src/catena/state-file.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { CollectorHarness } from '../helpers/catena.js';
import { samples, value } from '../helpers/exposition.js';
import { catenaConfig } from '../helpers/runtime.js';

const T0 = Date.UTC(2026, 0, 1);
const KEY = 'key-future-0123456789';
const MIN = 60_000;

let sim: RunningSimulator;
let dir: string;
beforeAll(async () => {
  sim = await startSimulator({ clock: 'manual', startTime: T0, streams: 1, sessions: 1, catenaHistory: false, churn: false, catenaKeys: [{ key: KEY, portal: 'p' }] });
  dir = mkdtempSync(join(tmpdir(), 'fe-future-'));
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});
const open: CollectorHarness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
  sim.world.catena.clear();
});
function harness(overrides: Partial<CatenaConfig> = {}): CollectorHarness {
  const h = new CollectorHarness(catenaConfig('main', sim.url, { apiKey: KEY, pageSize: 50, ...overrides }), sim);
  open.push(h);
  return h;
}
const counted = (text: string) => samples(text, 'flussonic_catena_operations_total', { portal: 'p' }).reduce((sum, s) => sum + s.value, 0);

describe('catena records from the future', () => {
  it('a record dated 2099 is not counted, does not move the position, and is counted as rejected and logged once', async () => {
    const statePath = join(dir, 'state-1.json');
    const h = harness({ stateFile: statePath });
    const start = sim.now();
    await h.poll();
    for (let i = 0; i < 66; i++) sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: `a${i}`, createdAt: start + 1000 + i });
    sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: 'future', createdAt: Date.UTC(2099, 0, 1), operationId: 'op-2099' });
    // Within the skew (4 minutes ahead): counted as usual.
    sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: 'near', createdAt: start + 2000 + 4 * MIN });
    sim.advance(2000);
    await h.poll();
    expect(counted(h.text)).toBe(67);
    for (let i = 0; i < 65; i++) sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: `b${i}`, createdAt: start + 3000 + 4 * MIN + i });
    sim.advance(5 * MIN);
    await h.poll();
    await h.poll();
    expect(counted(h.text)).toBe(132);
    expect(value(h.text, 'flussonic_catena_records_rejected_total', { reason: 'future' })).toBe(1);
    expect(value(h.text, 'flussonic_catena_last_operation_timestamp_seconds', { portal: 'p' })).toBe((start + 3000 + 4 * MIN + 64) / 1000);
    const warned = h.log.entries().filter((e) => String(e.msg).startsWith('operation record not counted'));
    expect(warned).toEqual([expect.objectContaining({ operationId: 'op-2099', createdAt: '2099-01-01T00:00:00.000Z' })]);
    const saved = JSON.parse(readFileSync(statePath, 'utf8')) as { position: { ms: number } };
    expect(saved.position.ms).toBe(start + 3000 + 4 * MIN + 64);
  });

  it('max_clock_skew: 0 rejects a record one millisecond ahead', async () => {
    const h = harness({ maxClockSkewMs: 0 });
    await h.poll();
    sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: 'x', createdAt: sim.now() + 1 });
    sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: 'y', createdAt: sim.now() });
    await h.poll();
    expect(counted(h.text)).toBe(1);
    expect(value(h.text, 'flussonic_catena_records_rejected_total', { reason: 'future' })).toBe(1);
  });
});

describe('a state file with a position in the future', () => {
  it('is set aside like a corrupt one (31 years ahead, and just beyond the skew), and one within the skew loads', async () => {
    const now = Date.UTC(2026, 5, 1);
    const write = (name: string, positionMs: number) => {
      const ledger = emptyLedger(now - MIN);
      ledger.position = { ms: positionMs, ids: new Set(['x']) };
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(ledgerToJson(ledger, 'main', now)));
      return path;
    };
    const far = await loadStateFile(write('far.json', Date.UTC(2057, 0, 1)), 'main', now, 5 * MIN);
    expect(far).toMatchObject({ kind: 'set_aside', reason: expect.stringMatching(/position\.ms 2057-01-01T00:00:00\.000Z is in the future/) });
    expect(readdirSync(dir).some((f) => f.startsWith('far.json.corrupt-'))).toBe(true);
    const justBeyond = await loadStateFile(write('beyond.json', now + 5 * MIN + 1), 'main', now, 5 * MIN);
    expect(justBeyond.kind).toBe('set_aside');
    const within = await loadStateFile(write('within.json', now + 5 * MIN), 'main', now, 5 * MIN);
    expect(within.kind).toBe('loaded');
  });

  it('the collector starts afresh from such a file and counts the operations since', async () => {
    const statePath = join(dir, 'state-2.json');
    const ledger = emptyLedger(sim.now() - MIN);
    ledger.position = { ms: Date.UTC(2057, 0, 1), ids: new Set() };
    writeFileSync(statePath, JSON.stringify(ledgerToJson(ledger, 'main', sim.now())));
    const h = harness({ stateFile: statePath, start: { kind: 'history', ms: 10 * MIN } });
    sim.world.catena.add({ type: 'createSubscriber', portalId: 'p', subscriberId: 's', createdAt: sim.now() - MIN });
    await h.poll();
    expect(counted(h.text)).toBe(1);
    expect(h.log.entries().some((e) => e.msg === 'catena state file set aside: starting afresh')).toBe(true);
  });
});
