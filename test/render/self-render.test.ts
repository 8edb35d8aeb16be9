/** SelfMetrics.render() reuses a recent rendering only while none of the exporter's own series changed. */
import { describe, expect, it } from 'vitest';
import { SelfMetrics } from '../../src/serve/self.js';
import { value } from '../helpers/exposition.js';

describe('self-metrics rendering reuse', () => {
  it('serves concurrent and closely following scrapes from one rendering', async () => {
    const self = new SelfMetrics({ version: 'test' });
    const [a, b] = await Promise.all([self.render(), self.render()]);
    expect(b).toBe(a);
    expect(await self.render()).toBe(a);
  });

  it('renders again as soon as an own series changed, without waiting for the reuse window', async () => {
    const self = new SelfMetrics({ version: 'test', defaultMetrics: false });
    const stats = self.apiStats('edge-1');
    stats.request('/sessions', '200');
    expect(value(await self.render(), 'flussonic_exporter_api_requests_total', { server: 'edge-1', endpoint: '/sessions', code: '200' })).toBe(1);
    stats.request('/sessions', '200');
    expect(value(await self.render(), 'flussonic_exporter_api_requests_total', { server: 'edge-1', endpoint: '/sessions', code: '200' })).toBe(2);
    self.collectorRun('edge-1', 'sessions', false, 0.5, 1000);
    expect(value(await self.render(), 'flussonic_exporter_collector_success', { server: 'edge-1', collector: 'sessions' })).toBe(0);
    self.setServerUp('edge-1', true);
    expect(value(await self.render(), 'flussonic_up', { server: 'edge-1' })).toBe(1);
  });
});
