/**
 * Per-input families (src/collect/stream-inputs-map.ts) on the real samples, on the 23.05
 * OpenAPI examples of `input_stats`, on synthetic items for the behaviours the samples do not show,
 * and on the simulator in both stats shapes through the real client. Expected values are written
 * by hand from the sample files (each comment names the field).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamsSelect } from '../../src/collect/streams.js';
import type { JsonObject } from '../../src/flussonic/api.js';
import type { SeriesWriter } from '../../src/render/series.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { OPENAPI_23_05, SAMPLES_2021, SAMPLES_2025, sharedFile } from '../helpers/shared.js';
import {
  ALL_FAMILIES,
  ALL_ON,
  applySelect,
  expectPromtoolClean,
  exposition,
  NO_FILTER,
  readFixture,
  readJson,
  SERVER,
  mapStreams,
  pollStreams,
  sampleLines,
  type StreamConfig,
} from './helpers.js';

const ON = ALL_ON;
const DEFAULT_SWITCHES: StreamConfig = { streams: NO_FILTER, families: { ...ALL_FAMILIES, inputs: false } };

const map = mapStreams;

/** The sample lines of per-input series (those with an `input` label). */
function inputLines(out: SeriesWriter): string[] {
  return sampleLines(exposition(out)).filter((l) => l.includes(',input="'));
}

describe('per-input families: the 2021 runtime sample (flat, captured from a server)', () => {
  it('gives no per-input series: its items carry no `inputs` (some have `urls`, without runtime stats), and nothing is invented', (ctx) => {
    const path = sharedFile(`${SAMPLES_2021}/streams_items.json`);
    const items = path ? (readJson(path) as JsonObject[]) : (readFixture('flussonic/2021-runtime-streams-c01-c04-c09.json') as JsonObject[]);
    if (!path) ctx.annotate('only the fixture subset c/01, c/04, c/09');
    expect(items.every((s) => s.inputs === undefined)).toBe(true);
    expect(items.some((s) => Array.isArray(s.urls))).toBe(true);
    const out = map(items);
    expect(inputLines(out)).toEqual([]);
    expect(out.problems).toEqual([]);
  });
});

describe('per-input families: the 2025 examples (go-flussonic)', () => {
  // inputs[0].stats: active true, opened_at 1637094994000 (ms; 2025), no bytes, last_dts_at,
  // connected_at or error in the example.
  const EXPECTED = [
    'flussonic_stream_input_active{server="edge-1",stream="example",input="0"} 1',
    'flussonic_stream_input_start_time_seconds{server="edge-1",stream="example",input="0"} 1637094994',
    'flussonic_stream_input_error{server="edge-1",stream="example",input="0"} 0',
  ];
  const list = (readFixture('flussonic/2025-example-streams_list.json') as { streams: JsonObject[] }).streams;

  it('streams_list.json: active, start time in seconds from opened_at in ms, no error', () => {
    const out = map(list);
    expect(inputLines(out)).toEqual(EXPECTED);
    expect(out.problems).toEqual([]);
  });

  it('stream_get.json gives the same', (ctx) => {
    const path = sharedFile(`${SAMPLES_2025}/stream_get.json`);
    if (!path) return ctx.skip();
    expect(inputLines(map([readJson(path) as JsonObject]))).toEqual(EXPECTED);
  });

  it('with the default switches only flussonic_stream_input_active', () => {
    expect(inputLines(map(list, DEFAULT_SWITCHES))).toEqual([EXPECTED[0]]);
  });

  it('maps the same through the select list, and leaks neither the input URLs nor their headers', () => {
    const selected = list.map((s) => applySelect(s, streamsSelect(ALL_FAMILIES)));
    expect(inputLines(map(selected))).toEqual(EXPECTED);
    const text = exposition(map(list));
    for (const secret of ['fake://fake', 'udp://239.0.0.1:1234', 'dXNlcjpwYXNzd29yZA==', '172.16.25.73']) expect(text).not.toContain(secret);
  });
});

describe('per-input families: 23.05 input_stats, from the OpenAPI examples', () => {
  /** An `input_stats` object made of the `example` of every property of the 23.05 schema. */
  function examples(): Record<string, unknown> | undefined {
    const path = sharedFile(OPENAPI_23_05);
    if (!path) return undefined;
    const spec = readJson(path) as { components: { schemas: Record<string, { properties: Record<string, { example?: unknown }> }> } };
    const props = spec.components.schemas.input_stats!.properties;
    return Object.fromEntries(Object.entries(props).filter(([, p]) => p.example !== undefined).map(([k, p]) => [k, p.example]));
  }

  it('bytes, last frame and start time from connected_at (ms); opened_at (seconds) only without it', (ctx) => {
    const stats = examples();
    if (!stats) return ctx.skip();
    // Examples: bytes 1698183, last_dts_at 1643789899794, connected_at 1643789899794 (utc_ms),
    // opened_at 1643789953 (utc, seconds), active true; error has no example.
    expect(stats).toMatchObject({ bytes: 1698183, last_dts_at: 1643789899794, connected_at: 1643789899794, opened_at: 1643789953, active: true });
    const lines = inputLines(map([{ name: 's', stats: { alive: true }, inputs: [{ url: 'udp://x', stats }] }]));
    expect(lines).toEqual([
      'flussonic_stream_input_active{server="edge-1",stream="s",input="0"} 1',
      'flussonic_stream_input_received_bytes_total{server="edge-1",stream="s",input="0"} 1698183',
      'flussonic_stream_input_last_frame_timestamp_seconds{server="edge-1",stream="s",input="0"} 1643789899.794',
      'flussonic_stream_input_start_time_seconds{server="edge-1",stream="s",input="0"} 1643789899.794',
      'flussonic_stream_input_error{server="edge-1",stream="s",input="0"} 0',
    ]);
    const { connected_at: _, ...withoutConnected } = stats;
    const older = inputLines(map([{ name: 's', stats: { alive: true }, inputs: [{ url: 'udp://x', stats: withoutConnected }] }]));
    expect(older).toContain('flussonic_stream_input_start_time_seconds{server="edge-1",stream="s",input="0"} 1643789953');
  });
});

describe('per-input families: behaviours the samples do not show', () => {
  const one = (item: Record<string, unknown>, config: StreamConfig = ON) => {
    const out = map([{ name: 'live/one', stats: { alive: true }, ...item }], config);
    return { out, lines: inputLines(out) };
  };
  const L = (input: number) => `server="edge-1",stream="live/one",input="${input}"`;

  it('labels each input by its 0-based position; a configured input without runtime stats gives nothing', () => {
    const { lines } = one({ inputs: [{ url: 'a://1' }, { url: 'b://2', stats: null }, { url: 'c://3', stats: { active: true } }] });
    expect(lines).toEqual([`flussonic_stream_input_active{${L(2)}} 1`, `flussonic_stream_input_error{${L(2)}} 0`]);
  });

  it('prefers stats.inputs[i] field by field over inputs[i].stats', () => {
    const { lines } = one({
      inputs: [{ url: 'a://1', stats: { active: true, bytes: 10, opened_at: 1700000000 } }],
      stats: { alive: true, inputs: [{ active: false, last_dts_at: 1700000001500 }] },
    });
    expect(lines).toEqual([
      `flussonic_stream_input_active{${L(0)}} 0`,
      `flussonic_stream_input_received_bytes_total{${L(0)}} 10`,
      `flussonic_stream_input_last_frame_timestamp_seconds{${L(0)}} 1700000001.5`,
      `flussonic_stream_input_start_time_seconds{${L(0)}} 1700000000`,
      `flussonic_stream_input_error{${L(0)}} 0`,
    ]);
  });

  it('error: 1 for a text or an object (22.06 binary_value), 0 for null or "", a problem for a number; never the text', () => {
    const { out, lines } = one({
      inputs: [
        { stats: { error: 'econnrefused by 10.0.0.9' } },
        { stats: { error: { binary: 'AAE=' } } },
        { stats: { error: null } },
        { stats: { error: '' } },
        { stats: { error: 42 } },
      ],
    });
    expect(lines).toEqual([0, 1, 2, 3].map((i) => `flussonic_stream_input_error{${L(i)}} ${i < 2 ? 1 : 0}`));
    expect(out.problems).toEqual([{ family: 'flussonic_stream_input_error', labels: ['live/one', '4'], got: 'number' }]);
    expect(exposition(out)).not.toContain('econnrefused');
  });

  it('reports inputs that are not arrays, entries that are not objects and values of the wrong type as shape problems', () => {
    const { out, lines } = one({ inputs: true, stats: { alive: true, inputs: [7, { active: 'yes', bytes: '12' }] } });
    expect(lines).toEqual([`flussonic_stream_input_error{${L(1)}} 0`]);
    expect(out.problems.map((p) => `${p.family} ${p.labels.join('/')} ${p.got}`)).toEqual([
      'flussonic_stream_input_active live/one boolean',
      'flussonic_stream_input_active live/one/0 number',
      'flussonic_stream_input_active live/one/1 string "yes"',
      'flussonic_stream_input_received_bytes_total live/one/1 string "12"',
    ]);
  });

  it('passes promtool check metrics', () => {
    expectPromtoolClean(exposition(one({ inputs: [{ stats: { active: true, bytes: 1, last_dts_at: 1, opened_at: 2, error: 'x' } }] }).out));
  });
});


for (const shape of ['flat', 'nested'] as const) {
  describe(`per-input families: the simulator (${shape} stats), through the client`, () => {
    let sim: RunningSimulator;
    beforeAll(async () => {
      sim = await startSimulator({ streams: 3, sessions: 0, shape, seed: 3, clock: 'manual', churn: false });
      sim.world.streams.put('fo', { inputs: [{ url: 'rtsp://cam:secret-pw@10.0.0.7/h264' }, { url: 'hls://backup.example/fo.m3u8' }] });
      sim.advance(30_000);
    });
    afterAll(() => sim.close());

    async function collect(): Promise<string[]> {
      const text = await pollStreams(sim.url);
      expect(text).not.toContain('secret-pw');
      return sampleLines(text).filter((l) => l.includes('stream="fo",input="'));
    }

    /** The simulator's runtime of input i as it serves it, in the place this shape puts it. */
    function served(i: number): Record<string, number | boolean | string> {
      const doc = sim.world.streamDocs().find((d) => d.name === 'fo')!;
      return shape === 'flat' ? (doc.inputs as { stats: Record<string, never> }[])[i]!.stats : (doc.stats as { inputs: Record<string, never>[] }).inputs[i]!;
    }
    const line = (family: string, input: number, value: number) => `flussonic_stream_input_${family}{server="${SERVER}",stream="fo",input="${input}"} ${value}`;

    it('follows a failover: input 1 becomes active, input 0 does not, with the values served', async () => {
      expect(await collect()).toContain(line('active', 0, 1));
      sim.world.streams.setFailover('fo', true);
      sim.advance(10_000);
      const lines = await collect();
      const [primary, backup] = [served(0), served(1)];
      expect(lines).toContain(line('active', 0, 0));
      expect(lines).toContain(line('active', 1, 1));
      expect(backup.bytes as number).toBeGreaterThan(0);
      expect(lines).toContain(line('received_bytes_total', 1, backup.bytes as number));
      expect(lines).toContain(line('last_frame_timestamp_seconds', 1, (backup.last_dts_at as number) / 1000));
      // The primary's last frame is from before the failover; the backup's is now.
      expect(backup.last_dts_at as number).toBeGreaterThan(primary.last_dts_at as number);
      if (shape === 'flat') {
        // 23.x: connected_at in ms wins over opened_at in seconds; the failed primary reports an error.
        expect(lines).toContain(line('start_time_seconds', 1, (backup.connected_at as number) / 1000));
        expect(lines).toContain(line('error', 0, 1));
        expect(typeof primary.error).toBe('string');
      } else {
        // 2025: opened_at in ms; no error field, so 0.
        expect(lines).toContain(line('start_time_seconds', 1, (backup.opened_at as number) / 1000));
        expect(lines).toContain(line('error', 0, 0));
      }
      expect(lines).toContain(line('error', 1, 0));
    });

    it('gives each reconnect of a dead stream a new input start time', async () => {
      sim.world.streams.setFailover('fo', false);
      sim.world.streams.setAlive('fo', false);
      const before = await collect();
      sim.advance(12_000); // two retries (every 5 s)
      const after = await collect();
      const start = (ls: string[]) => ls.find((l) => l.startsWith(`flussonic_stream_input_start_time_seconds{server="${SERVER}",stream="fo",input="0"}`));
      expect(start(after)).toBeDefined();
      expect(start(after)).not.toBe(start(before));
      expect(after).toContain(line('active', 0, 0));
      sim.world.streams.setAlive('fo', true);
    });
  });
}
