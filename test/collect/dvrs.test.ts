/** The DVR storages collector against the simulator: both server generations, errors, no DVRs. */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createDvrsCollector, DVRS_WALK } from '../../src/collect/dvrs.js';
import { COLLECTORS } from '../../src/collect/index.js';
import { NO_DATA, type CollectOutcome } from '../../src/collect/types.js';
import { FlussonicClient } from '../../src/flussonic/client.js';
import { SelfMetrics } from '../../src/serve/self.js';
import { SeriesWriter } from '../../src/render/series.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '@flussonic-exporter/simulator';
import { samples } from '../helpers/exposition.js';
import { serverConfig } from '../helpers/runtime.js';
import { exposition, expectPromtoolClean } from './helpers.js';

const sims: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

async function pollDvrs(options: SimulatorOptions): Promise<{ sim: RunningSimulator; poll: () => Promise<{ outcome: CollectOutcome; text: string }> }> {
  const sim = await startSimulator({ clock: 'manual', streams: 2, sessions: 0, ...options });
  sims.push(sim);
  const config = serverConfig('edge-1', sim.url, { pageSize: 2 });
  const collector = createDvrsCollector();
  const self = new SelfMetrics({ version: 'test', defaultMetrics: false });
  const poll = async (): Promise<{ outcome: CollectOutcome; text: string }> => {
    const client = new FlussonicClient({ config, stats: self.apiStats('edge-1') });
    try {
      const out = new SeriesWriter([['server', 'edge-1']]);
      const outcome: CollectOutcome = await collector.collect({ client, config, signal: AbortSignal.timeout(10_000), log: pino({ level: 'silent' }), out });
      expect(out.problemCount).toBe(0);
      return { outcome, text: exposition(out) };
    } finally {
      await client.destroy();
    }
  };
  return { sim, poll };
}

type Doc = Record<string, any>;

describe('dvrs collector against the simulator', () => {
  it('reads the storage-level stats of a 2025 server, every storage over a paged walk', async () => {
    const { sim, poll } = await pollDvrs({ shape: 'nested', dvrs: 3 });
    sim.world.dvrs.addError('dvr1', 'enospc', 3);
    const { outcome, text } = await poll();
    expect(outcome).toBeUndefined();
    const dvrs = sim.world.dvrs.list() as Doc[];
    expect(dvrs).toHaveLength(3);
    for (const dvr of dvrs) {
      expect(samples(text, 'flussonic_dvr_storage_size_bytes', { dvr: dvr.name })[0]?.value).toBe(dvr.stats.size);
      expect(samples(text, 'flussonic_dvr_storage_used_bytes', { dvr: dvr.name })[0]?.value).toBe(dvr.stats.used);
      for (const [kind, count] of Object.entries(dvr.stats.errors as Record<string, number>)) {
        expect(samples(text, 'flussonic_dvr_storage_errors_total', { dvr: dvr.name, error: kind })[0]?.value).toBe(count);
      }
    }
    expect(samples(text, 'flussonic_dvr_storage_errors_total', { dvr: 'dvr1', error: 'enospc' })[0]?.value).toBe(3);
    const walk = sim.requests.entries().filter((e) => e.apiPath === '/dvrs');
    expect(walk).toHaveLength(2);
    expect(walk[0]!.query.select).toBe(DVRS_WALK.select.join(','));
    expectPromtoolClean(text);
  });

  it('sums the per-disk stats of a 23.x server, which has no storage-level stats', async () => {
    const { sim, poll } = await pollDvrs({ shape: 'flat', dvrs: 2 });
    const { text } = await poll();
    for (const dvr of sim.world.dvrs.list() as Doc[]) {
      expect(dvr.stats).toBeUndefined();
      const disks = dvr.disks as Doc[];
      const size = disks.reduce((s, d) => s + d.stats.size, 0);
      const used = disks.reduce((s, d) => s + (d.stats.size * d.stats.usage) / 100, 0);
      expect(samples(text, 'flussonic_dvr_storage_size_bytes', { dvr: dvr.name })[0]?.value).toBe(size);
      expect(samples(text, 'flussonic_dvr_storage_used_bytes', { dvr: dvr.name })[0]?.value).toBeCloseTo(used, 0);
    }
    expect(samples(text, 'flussonic_dvr_storage_errors_total')).toHaveLength(0);
    expectPromtoolClean(text);
  });

  it('says NO_DATA, with no samples, on a server without DVR storages', async () => {
    const { poll } = await pollDvrs({ dvrs: 0 });
    const { outcome, text } = await poll();
    expect(outcome).toBe(NO_DATA);
    expect(text).toBe('');
  });
});

describe('collector table', () => {
  it('has sessions enabled and dvrs disabled by default', () => {
    const byName = new Map(COLLECTORS.map((c) => [c.name, c.defaultEnabled]));
    expect(byName.get('sessions')).toBe(true);
    expect(byName.get('dvrs')).toBe(false);
  });
});
