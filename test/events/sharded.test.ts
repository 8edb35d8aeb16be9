/**
 * Sharding: every replica accepts events for every server it knows, owned or not, and exports
 * them on its own /metrics (never on /probe, which serves the polled series of owned servers).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExporter, type Exporter } from '../../src/exporter.js';
import { ownsServer } from '../../src/fleet/shard.js';
import type { EventsConfig } from '../../src/config/types.js';
import { captureLogger, exporterConfig, serverConfig } from '../helpers/runtime.js';
import { value } from '../helpers/exposition.js';

const EVENTS: EventsConfig = { enabled: true, maxBodyBytes: 1 << 20, maxEventsPerBatch: 1000, dedupWindow: 1024, register: false, sinkName: 's', families: { push_blocked: false, stream_closed: false, play_per_stream: false } };
const NAMES = Array.from({ length: 8 }, (_, i) => `edge-${i}`);
const running: Exporter[] = [];
afterAll(async () => {
  for (const e of running) await e.stop();
});

describe('events on a sharded fleet', () => {
  it('each replica counts events of servers it does not poll, on its own /metrics', async () => {
    const servers = NAMES.map((name) => serverConfig(name, 'http://127.0.0.1:9', { eventsSecret: `secret-${name}` }));
    for (const shard of [0, 1]) {
      const exporter = createExporter({ config: exporterConfig(servers, { events: EVENTS }), logger: captureLogger().logger, version: 'test', shard: { shard, totalShards: 2 } });
      running.push(exporter);
      const foreign = NAMES.find((n) => !ownsServer({ shard, totalShards: 2 }, n))!;
      const auth = `Basic ${Buffer.from(`flussonic:secret-${foreign}`).toString('base64')}`;
      const body = JSON.stringify([{ event: 'source_closed', event_id: 1, media: 'cam' }]);
      const res = await exporter.app.inject({ method: 'POST', url: `/events/${foreign}`, headers: { authorization: auth, 'content-type': 'application/json' }, payload: body });
      expect(res.statusCode).toBe(200);
      const text = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(value(text, 'flussonic_stream_source_lost_total', { server: foreign, stream: 'cam' })).toBe(1);
      const probe = await exporter.app.inject({ method: 'GET', url: `/probe?target=${foreign}` });
      expect(probe.body).not.toContain('flussonic_stream_source_lost_total');
    }
  });
});
