/**
 * The state file across restarts, against the simulator's generated Catena activity: a restart in
 * the middle ends with exactly the totals of an uninterrupted run, counters never go down, and a
 * corrupt state file is reported, set aside and replaced while the collector runs on.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CatenaConfig } from '../../src/config/types.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { CollectorHarness, sampleMap } from '../helpers/catena.js';
import { samples } from '../helpers/exposition.js';
import { catenaConfig } from '../helpers/runtime.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const KEY = 'key-restart-0123456789';

let sim: RunningSimulator;
let dir: string;
beforeAll(async () => {
  // Three days of generated history before the clock's start, and more activity as it moves.
  sim = await startSimulator({ clock: 'manual', seed: 7, streams: 1, sessions: 0, catenaHistory: true, churn: true, catenaKeys: [{ key: KEY, portal: 'tv' }] });
});
afterAll(() => sim?.close());
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'catena-restart-'));
});
const open: CollectorHarness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
  sim.faults.clear();
  await rm(dir, { recursive: true, force: true });
});

function harness(overrides: Partial<CatenaConfig> = {}): CollectorHarness {
  const h = new CollectorHarness(catenaConfig('tv', sim.url, { apiKey: KEY, pageSize: 50, start: { kind: 'history', ms: DAY }, ...overrides }), sim);
  open.push(h);
  return h;
}

const COUNTERS = [
  'flussonic_catena_operations_total',
  'flussonic_catena_subscriptions_created_total',
  'flussonic_catena_subscriptions_cancelled_total',
  'flussonic_catena_billed_seconds_total',
  'flussonic_catena_billed_amount_total',
  'flussonic_catena_unmatched_cancellations_total',
];
function counterTotals(text: string): Map<string, number> {
  return sampleMap(COUNTERS.flatMap((name) => samples(text, name)));
}

describe('state file: restarts', () => {
  it('ends a run with a restart in the middle with exactly the totals of an uninterrupted run', async () => {
    const prices = new Map(sim.world.catena.packages('tv').map((p, i) => [p.packageId, { amount: 3 + i, perMs: 30 * DAY, currency: i % 2 ? 'USD' : 'EUR' }]));
    const statePath = join(dir, 'state', 'tv.json');
    const uninterrupted = harness({ prices });
    let restarted = harness({ prices, stateFile: statePath });
    await uninterrupted.poll();
    await restarted.poll();

    for (let step = 1; step <= 10; step++) {
      sim.advance(3 * HOUR);
      await uninterrupted.poll();
      if (step === 4 || step === 7) {
        // Stop after a poll, come back: the first poll of the new instance finds nothing new.
        await restarted.poll();
        const before = restarted.text;
        await restarted.close();
        restarted = harness({ prices, stateFile: statePath });
        expect(await restarted.poll()).toBe(before);
      } else if (step === 5) {
        // Down during this step: the next poll reads two steps at once.
        continue;
      } else {
        const before = counterTotals(restarted.text);
        await restarted.poll();
        // No counter goes down, none disappears.
        for (const [series, v] of before) expect(counterTotals(restarted.text).get(series), series).toBeGreaterThanOrEqual(v);
      }
    }

    expect(sampleMap(restarted.samples())).toEqual(sampleMap(uninterrupted.samples()));
    // The run had substance: subscriptions billed, some from before the horizon by look-up.
    const text = uninterrupted.text;
    const sum = (name: string) => samples(text, name).reduce((s, x) => s + x.value, 0);
    expect(sum('flussonic_catena_operations_total')).toBeGreaterThan(100);
    expect(sum('flussonic_catena_subscriptions_cancelled_total')).toBeGreaterThan(10);
    expect(sum('flussonic_catena_billed_seconds_total')).toBeGreaterThan(0);
    expect(sum('flussonic_catena_billed_amount_total')).toBeGreaterThan(0);
    expect(restarted.log.entries().filter((e) => e.msg === 'catena state restored')).toHaveLength(1);
  });

  it('writes the state after a successful poll only', async () => {
    const statePath = join(dir, 'tv.json');
    const h = harness({ stateFile: statePath });
    await h.poll();
    const first = await readFile(statePath, 'utf8');
    expect(JSON.parse(first)).toMatchObject({ format: 'flussonic-exporter/catena-state', version: 1, catena: 'tv' });
    sim.advance(HOUR);
    sim.faults.set('/operations', { malformedJson: true });
    await expect(h.poll()).rejects.toMatchObject({ reason: 'invalid_json' });
    expect(await readFile(statePath, 'utf8')).toBe(first);
    sim.faults.clear();
    await h.poll();
    const second = JSON.parse(await readFile(statePath, 'utf8')) as { position: { ms: number } };
    expect(second.position.ms).toBeGreaterThan((JSON.parse(first) as { position: { ms: number } }).position.ms);
    expect(await readdir(dir)).toEqual(['tv.json']);
  });
});

describe('state file: corrupt', () => {
  it('reports it with path and reason, sets it aside unchanged, and runs on with a new state', async () => {
    const statePath = join(dir, 'tv.json');
    await writeFile(statePath, '{"format":"flussonic-exporter/catena-state","version":1,"portals":{"tv":');
    const h = harness({ stateFile: statePath });
    const text = await h.poll();
    expect(samples(text, 'flussonic_catena_operations_total').length).toBeGreaterThan(0);

    const warnings = h.log.entries().filter((e) => e.msg === 'catena state file set aside: starting afresh');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, path: statePath });
    expect(String(warnings[0]!.reason)).toMatch(/^not valid JSON/);
    const movedTo = String(warnings[0]!.movedTo);
    expect(movedTo.startsWith(`${statePath}.corrupt-`)).toBe(true);
    expect(await readFile(movedTo, 'utf8')).toBe('{"format":"flussonic-exporter/catena-state","version":1,"portals":{"tv":');
    expect(JSON.parse(await readFile(statePath, 'utf8'))).toMatchObject({ format: 'flussonic-exporter/catena-state', catena: 'tv' });
    expect((await readdir(dir)).sort()).toEqual(['tv.json', movedTo.slice(dir.length + 1)].sort());
  });

  it('sets aside a state file whose content is JSON but not a valid state', async () => {
    const statePath = join(dir, 'tv.json');
    await writeFile(statePath, JSON.stringify({ format: 'flussonic-exporter/catena-state', version: 1, catena: 'tv', horizonMs: 'yesterday' }));
    const h = harness({ stateFile: statePath });
    await h.poll();
    const warning = h.log.entries().find((e) => e.msg === 'catena state file set aside: starting afresh');
    expect(warning?.reason).toBe('not a valid state: horizonMs: expected a time in Unix ms, got "yesterday"');
  });
});
