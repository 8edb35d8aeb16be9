/**
 * collect() of the streams and server collectors against the embedded simulator, through the real
 * Flussonic client: a select-limited walk over several pages must give exactly what mapping the
 * simulator's complete documents gives, for both stats shapes and with the cardinality controls
 * on; and nothing the simulator hides in those documents (input and push URLs with credentials,
 * IPs, runtime ids) may come out.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectServer, mapServerStats } from '../../src/collect/server.js';
import { mapStream } from '../../src/collect/streams-map.js';
import { collectStreams, streamsSelect } from '../../src/collect/streams.js';
import type { CollectContext } from '../../src/collect/types.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import type { ServerConfig } from '../../src/config/types.js';
import { FlussonicClient } from '../../src/flussonic/client.js';
import type { SeriesWriter } from '../../src/render/series.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { NO_STATS, serverConfig } from '../helpers/runtime.js';
import { expectPromtoolClean, exposition, newWriter, sampleLines, SERVER, stringsUnderKeys } from './helpers.js';

const SILENT = pino({ level: 'silent' });
const FORBIDDEN_KEYS = new Set(['url', 'ip', 'id', 'source_id', 'user_agent', 'token', 'password', 'license_txt']);

async function collect(sim: RunningSimulator, config: ServerConfig, run: (ctx: CollectContext) => Promise<void>): Promise<SeriesWriter> {
  const client = new FlussonicClient({ config, stats: NO_STATS, retryBackoffMs: 1 });
  const out = newWriter();
  try {
    await run({ client, config, signal: AbortSignal.timeout(15_000), log: SILENT, out });
  } finally {
    await client.close();
  }
  return out;
}

for (const shape of ['flat', 'nested'] as const) {
  describe(`streams and server collectors against the simulator (${shape} stats)`, () => {
    let sim: RunningSimulator;
    beforeAll(async () => {
      sim = await startSimulator({ streams: 23, sessions: 120, gpus: 2, dvrs: 1, shape, seed: 7, clock: 'manual', churn: false });
      sim.advance(90_000); // let counters, bitrates and GPU loads move away from their start values
    });
    afterAll(() => sim.close());

    it('walks /streams page by page with the select list and maps what mapping the full documents gives', async () => {
      const config = serverConfig(SERVER, sim.url, { pageSize: 5 });
      sim.requests.clear();
      const out = await collect(sim, config, collectStreams);
      const pages = sim.requests.entries().filter((r) => r.apiPath === '/streams');
      expect(pages).toHaveLength(5); // 23 streams, 5 per page
      for (const page of pages) {
        expect(page.query).toMatchObject({ limit: '5', select: streamsSelect(config.families).join(',') });
      }

      const expected = newWriter();
      for (const doc of sim.world.streamDocs()) mapStream(expected, doc, config);
      expect(out.problems).toEqual([]);
      expect(exposition(out)).toBe(exposition(expected));
      expect(sampleLines(exposition(out)).filter((l) => l.startsWith('flussonic_stream_info{'))).toHaveLength(23);
    });

    it('converts the simulator\'s values with the catalogue\'s units', async () => {
      const out = await collect(sim, serverConfig(SERVER, sim.url), collectStreams);
      const lines = sampleLines(exposition(out));
      const alive = sim.world.streamDocs().find((d) => (d.stats as Record<string, unknown>).alive === true)!;
      const stats = alive.stats as Record<string, number>;
      const s = `server="${SERVER}",stream="${alive.name as string}"`;
      expect(lines).toContain(`flussonic_stream_bitrate_bytes_per_second{${s}} ${stats.bitrate! * 125}`);
      expect(lines).toContain(`flussonic_stream_start_time_seconds{${s}} ${stats.opened_at! / 1000}`);
      expect(lines).toContain(`flussonic_stream_clients{${s}} ${stats.online_clients}`);
    });

    it('applies include/exclude and the family switches, and the narrower select still covers the mapping', async () => {
      const names = sim.world.streamDocs().map((d) => d.name as string);
      const config = serverConfig(SERVER, sim.url, {
        pageSize: 4,
        streams: { exclude: { source: names[0]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') } },
        families: DEFAULTS.server.families,
      });
      sim.requests.clear();
      const out = await collect(sim, config, collectStreams);
      const select = sim.requests.entries().find((r) => r.apiPath === '/streams')?.query.select ?? '';
      expect(select.split(',')).not.toEqual(expect.arrayContaining(['stats.media_info']));
      const expected = newWriter();
      for (const doc of sim.world.streamDocs()) mapStream(expected, doc, config);
      const text = exposition(out);
      expect(text).toBe(exposition(expected));
      expect(text).not.toContain(`stream="${names[0]}"`);
      expect(text).not.toMatch(/flussonic_stream_(track|push|input_errors|transcoder_(duplicated|dropped))/);
    });

    it('reads /config/stats with partitions and GPUs as mapping the document gives, GPU memory in bytes', async () => {
      const out = await collect(sim, serverConfig(SERVER, sim.url), collectServer);
      const expected = newWriter();
      mapServerStats(expected, sim.world.serverStats());
      expect(out.problems).toEqual([]);
      const text = exposition(out);
      expect(text).toBe(exposition(expected));
      const lines = sampleLines(text);
      expect(lines.filter((l) => l.startsWith('flussonic_transcoder_device_info{'))).toHaveLength(2);
      // The simulator reports GPU memory in MiB (15360 for the first card).
      expect(lines).toContain(`flussonic_transcoder_device_memory_total_bytes{server="${SERVER}",device="0"} ${15360 * 1048576}`);
      expect(lines.filter((l) => l.startsWith('flussonic_server_partition_size_bytes{')).length).toBeGreaterThan(0);
    });

    it('lets no URL, IP, runtime id or licence text of the simulated server out, and passes promtool', async () => {
      const config = serverConfig(SERVER, sim.url);
      const streams = await collect(sim, config, collectStreams);
      const server = await collect(sim, config, collectServer);
      const cache = exposition(streams) + exposition(server);
      const hidden = stringsUnderKeys([sim.world.streamDocs(), sim.world.serverStats()], FORBIDDEN_KEYS);
      expect(hidden.length).toBeGreaterThan(20);
      expect(hidden.filter((h) => cache.includes(h))).toEqual([]);
      const both = newWriter();
      for (const doc of sim.world.streamDocs()) mapStream(both, doc, config);
      mapServerStats(both, sim.world.serverStats());
      expectPromtoolClean(exposition(both));
    });
  });
}
