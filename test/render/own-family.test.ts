/**
 * OwnFamily, the store of one self-metric family: the same text prom-client renders for the same
 * operations (prom-client is the oracle), a family rendered again only after a change and never
 * stale, and programming errors refused as prom-client refused them.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { familyByName } from '../../src/serve/catalogue.js';
import { OwnFamily } from '../../src/serve/own-family.js';
import { SelfMetrics } from '../../src/serve/self.js';
import { value } from '../helpers/exposition.js';

/** prom-client's text of one metric, without the blank line it puts between families. */
async function oracleText(registry: Registry): Promise<string> {
  return (await registry.metrics()).split('\n').filter((l) => l !== '').join('\n') + '\n';
}

describe('OwnFamily', () => {
  it('renders what prom-client renders for the same sets, increments and removals', async () => {
    const def = familyByName('flussonic_exporter_api_requests_total');
    const registry = new Registry();
    const oracle = new Counter({ name: def.name, help: def.help, labelNames: [...def.labels], registers: [registry] });
    const own = new OwnFamily(def);
    const steps: [Record<string, string>, number][] = [
      [{ server: 'edge-1', endpoint: '/streams', code: '200' }, 1],
      [{ server: 'edge "2"', endpoint: '/sessions', code: 'error' }, 0],
      [{ server: 'back\\slash\nnewline', endpoint: '/streams', code: '503' }, 2.5],
      [{ server: 'edge-1', endpoint: '/streams', code: '200' }, 1e21],
    ];
    for (const [labels, by] of steps) {
      oracle.inc(labels, by);
      own.inc(labels, by);
      expect(own.render()).toBe(await oracleText(registry));
    }
    oracle.remove({ server: 'edge "2"', endpoint: '/sessions', code: 'error' });
    own.remove({ server: 'edge "2"', endpoint: '/sessions', code: 'error' });
    expect(own.render()).toBe(await oracleText(registry));

    const gaugeDef = familyByName('flussonic_exporter_config_last_reload_success');
    const gaugeRegistry = new Registry();
    const gauge = new Gauge({ name: gaugeDef.name, help: gaugeDef.help, labelNames: [...gaugeDef.labels], registers: [gaugeRegistry] });
    const ownGauge = new OwnFamily(gaugeDef);
    // A family without labels exports its series at 0 before anything is set, like prom-client.
    expect(ownGauge.render()).toBe(await oracleText(gaugeRegistry));
    gauge.set(1);
    ownGauge.set({}, 1);
    expect(ownGauge.render()).toBe(await oracleText(gaugeRegistry));
  });

  it('renders again after every change, and not without one', () => {
    const own = new OwnFamily(familyByName('flussonic_exporter_collector_success'));
    const labels = { server: 'edge-1', collector: 'streams' };
    own.set(labels, 1);
    const first = own.render();
    expect(value(first, 'flussonic_exporter_collector_success', labels)).toBe(1);
    expect(own.render()).toBe(first);
    own.set(labels, 1);
    expect(own.render()).toBe(first);
    own.set(labels, 0);
    expect(value(own.render(), 'flussonic_exporter_collector_success', labels)).toBe(0);
    own.set({ server: 'edge-2', collector: 'streams' }, 1);
    own.removeWhere((l) => l.server === 'edge-1');
    const text = own.render();
    expect(text).not.toContain('edge-1');
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-2', collector: 'streams' })).toBe(1);
  });

  it('refuses what prom-client refused: a label the family does not have, a negative increment, setting a counter', () => {
    const counter = new OwnFamily(familyByName('flussonic_exporter_series_dropped_total'));
    expect(() => counter.inc({ server: 'a', collector: 'b', extra: 'c' }, 1)).toThrow(/has no label extra/);
    expect(() => counter.inc({ server: 'a', collector: 'b' }, -1)).toThrow(/cannot add -1/);
    expect(() => counter.set({ server: 'a', collector: 'b' }, 1)).toThrow(/is a counter/);
  });
});

describe('SelfMetrics at fleet size', () => {
  it('shows the change of one of 250 targets at the next rendering', async () => {
    const self = new SelfMetrics({ version: 'test', defaultMetrics: false });
    for (let t = 0; t < 250; t++) {
      const stats = self.apiStats(`edge-${t}`);
      for (const endpoint of ['/streams', '/sessions']) stats.request(endpoint, '200');
      self.collectorRun(`edge-${t}`, 'streams', true, 0.1, 1000);
    }
    await self.render();
    self.collectorRun('edge-137', 'streams', false, 2.5, 1015);
    const text = await self.render();
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-137', collector: 'streams' })).toBe(0);
    expect(value(text, 'flussonic_exporter_collector_duration_seconds', { server: 'edge-137', collector: 'streams' })).toBe(2.5);
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-136', collector: 'streams' })).toBe(1);
    // Every reason of every endpoint from 0: 250 targets x 2 endpoints x 8 reasons.
    expect(text.split('\n').filter((l) => l.startsWith('flussonic_exporter_api_errors_total{')).length).toBe(4000);
    await self.removeTarget('server', 'edge-137');
    expect(await self.render()).not.toContain('"edge-137"');
  });
});
