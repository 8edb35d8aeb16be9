/**
 * Contract: simulator responses validate against Flussonic's published 23.05 OpenAPI schemas
 * (streams_list, sessions_list, server_stats, dvrs_list) in both stats shapes, and the nested
 * shape matches the 2025 sample payloads of go-flussonic field by field.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { getJson, walk } from './http-client.js';
import { samplesDir, specPath, validatorFor, type Schema } from './openapi-validator.js';

describe.skipIf(!specPath).each(['flat', 'nested'] as const)('contract with the 23.05 OpenAPI (%s shape)', (shape) => {
  let sim: RunningSimulator;
  let spec: Schema;
  beforeAll(async () => {
    spec = JSON.parse(readFileSync(specPath!, 'utf8')) as Schema;
    sim = await startSimulator({ clock: 'manual', shape, streams: 120, sessions: 600, gpus: 2, dvrs: 2, seed: 17 });
    // Some life: failures, failovers, closed sessions, grown counters.
    sim.advance(6 * 3600_000);
    const names = sim.world.streams.names();
    sim.world.streams.setAlive(names[0]!, false);
  });
  afterAll(() => sim?.close());

  const check = (schemaName: string, body: unknown) => {
    const validate = validatorFor(spec, schemaName);
    const ok = validate(body);
    expect(ok ? [] : validate.errors!.slice(0, 5).map((e: ErrorObject) => `${e.instancePath} ${e.message}`)).toEqual([]);
  };

  it('GET /streams matches streams_list, every page', async () => {
    const { items } = await walk(`${sim.url}/streamer/api/v3/streams`, 'streams', { limit: '50' });
    expect(items.length).toBe(120);
    const page = (await getJson(`${sim.url}/streamer/api/v3/streams?limit=50`)).body;
    check('streams_list', page);
    check('streams_list', { streams: items });
  });

  it('GET /streams?select=... still matches streams_list', async () => {
    check('streams_list', (await getJson(`${sim.url}/streamer/api/v3/streams?limit=1000&select=name,stats.alive,stats.media_info`)).body);
  });

  it('GET /sessions matches sessions_list', async () => {
    const page = (await getJson(`${sim.url}/streamer/api/v3/sessions?limit=1000`)).body;
    expect(page.sessions.length).toBeGreaterThan(100);
    check('sessions_list', page);
  });

  it('GET /config/stats matches server_stats', async () => {
    check('server_stats', (await getJson(`${sim.url}/streamer/api/v3/config/stats`)).body);
  });

  it('GET /dvrs matches dvrs_list', async () => {
    check('dvrs_list', (await getJson(`${sim.url}/streamer/api/v3/dvrs`)).body);
  });

  it('the validator is not vacuous: it rejects a wrong type where the schema is strict', async () => {
    const page = (await getJson(`${sim.url}/streamer/api/v3/streams?limit=3`)).body;
    page.streams[0].stats.bytes_out = 'many';
    const validate = validatorFor(spec, 'streams_list');
    expect(validate(page)).toBe(false);
    const stats = (await getJson(`${sim.url}/streamer/api/v3/config/stats`)).body;
    stats.transcoder_devices[0].gpu_temp = 40.5;
    expect(validatorFor(spec, 'server_stats')(stats)).toBe(false);
  });
});

// ---- the 2025 shape, field by field ----------------------------------------------------------

/** Every leaf path of a JSON value with its JSON type; array items collapse to `[]`. */
function leaves(value: unknown, path = '', out = new Map<string, Set<string>>()): Map<string, Set<string>> {
  const add = (t: string) => {
    let set = out.get(path);
    if (!set) out.set(path, (set = new Set()));
    set.add(t);
  };
  if (Array.isArray(value)) {
    add('array');
    for (const item of value) leaves(item, `${path}[]`, out);
  } else if (value !== null && typeof value === 'object') {
    add('object');
    for (const [k, v] of Object.entries(value)) leaves(v, path ? `${path}.${k}` : k, out);
  } else {
    add(value === null ? 'null' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value);
  }
  return out;
}

/** Paths the sample and the simulator both have must carry the same JSON type (integer fits number). */
function typeMismatches(sample: unknown, ours: unknown, ignore: RegExp[] = []): string[] {
  const s = leaves(sample);
  const o = leaves(ours);
  const problems: string[] = [];
  for (const [path, types] of o) {
    const want = s.get(path);
    if (!want || ignore.some((r) => r.test(path))) continue;
    for (const t of types) {
      const fits = want.has(t) || (t === 'integer' && want.has('number')) || (t === 'number' && want.has('integer') && path.endsWith('fps'));
      if (!fits) problems.push(`${path}: sample ${[...want].join('|')}, simulator ${t}`);
    }
  }
  return problems;
}

describe.skipIf(!samplesDir)('nested shape against the 2025 samples', () => {
  let sim: RunningSimulator;
  const sample = (file: string) => JSON.parse(readFileSync(`${samplesDir}/${file}`, 'utf8'));
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', shape: 'nested', streams: 150, sessions: 500, gpus: 2, dvrs: 1, seed: 9 });
    sim.advance(3600_000);
  });
  afterAll(() => sim?.close());

  it('streams: every field both have has the same type, and the 2025 structure is there', async () => {
    const want = sample('streams_list.json');
    const ours = (await walk(`${sim.url}/streamer/api/v3/streams`, 'streams', { limit: '1000' })).items;
    // A transcoder device id is `auto` or an integer (tc_deviceid): the sample shows `auto`.
    const unions = [/^transcoder\.global\.deviceid$/];
    for (const s of ours) expect(typeMismatches(want.streams[0], s, unions), s.name).toEqual([]);

    const ourPaths = new Set(ours.flatMap((s) => [...leaves(s).keys()]));
    const required = [
      'stats.alive',
      'stats.status',
      'stats.bitrate',
      'stats.input_bitrate',
      'stats.online_clients',
      'stats.opened_at',
      'stats.last_access_at',
      'stats.last_dts_at',
      'stats.lifetime',
      'stats.ts_delay',
      'stats.id',
      'stats.source_id',
      'stats.running_on',
      'stats.media_info.flow_type',
      'stats.media_info.tracks[].track_id',
      'stats.media_info.tracks[].bitrate',
      'stats.media_info.tracks[].avg_gop',
      'stats.media_info.tracks[].bandwidth',
      'stats.input.active',
      'stats.input.url',
      'stats.input.ip',
      'stats.input.proto',
      'stats.input.opened_at',
      'stats.input.ts_delay',
      'stats.input.valid_secondary_inputs',
      'inputs[].stats.active',
      'inputs[].stats.opened_at',
      'inputs[].stats.proto',
      'stats.push[].opened_at',
      'stats.push[].status',
      'stats.push[].url',
      'stats.transcoder.hw',
      'stats.transcoder.target',
      'stats.transcoder.tracks[].track_id',
      'stats.play.play_bytes_by_proto',
      'stats.dvr_info.bytes',
      'stats.dvr_info.depth',
      'stats.dvr_info.from',
      'stats.dvr_info.ranges[].from',
    ];
    const samplePaths = leaves(want.streams[0]);
    for (const path of required) {
      expect(samplePaths.has(path), `the sample has ${path}`).toBe(true);
      expect(ourPaths.has(path), `the simulator serves ${path}`).toBe(true);
    }
    // The 2025 model carries these counters (go-flussonic InputStats, TranscoderStats, PushCounters)
    // though the example payload has no example value for them.
    for (const path of ['stats.input.bytes', 'stats.input.input_switches', 'stats.input.errors_lost_packets', 'stats.inputs[].bytes', 'stats.transcoder.restarts', 'stats.transcoder.frames', 'stats.transcoder.tracks[].dup_frames_added', 'stats.push[].bytes', 'stats.push[].retries', 'stats.output_bandwidth']) {
      expect(ourPaths.has(path), path).toBe(true);
    }
    // The 23.x fields that 2025 dropped are absent.
    for (const gone of ['stats.bytes_in', 'stats.client_count', 'stats.retry_count', 'stats.input_error_rate', 'stats.out_bandwidth']) expect(ourPaths.has(gone), gone).toBe(false);
  });

  it('sessions: same types as the 2025 sample for every shared field', async () => {
    const want = sample('sessions_list.json');
    const ours = (await getJson(`${sim.url}/streamer/api/v3/sessions?limit=1000`)).body.sessions;
    for (const s of ours) expect(typeMismatches(want.sessions[0], s)).toEqual([]);
    const shared = [...leaves(want.sessions[0]).keys()].filter((p) => ours.some((s: unknown) => leaves(s).has(p)));
    expect(shared.length).toBeGreaterThan(20);
    expect(Object.keys(want).filter((k) => k !== 'sessions').sort()).toEqual(['estimated_count', 'next', 'prev']);
  });

  it('server stats: same types as the 2025 sample for every shared field', async () => {
    const want = sample('config_stats_get.json');
    const ours = (await getJson(`${sim.url}/streamer/api/v3/config/stats`)).body;
    // A device id is `auto` or an integer (tc_deviceid); the sample shows `auto`, running devices an integer.
    expect(typeMismatches(want, ours, [/^transcoder_devices\[\]\.id$/])).toEqual([]);
    expect(ours.transcoder_devices.every((d: { id: unknown }) => Number.isInteger(d.id))).toBe(true);
    for (const key of Object.keys(want).filter((k) => !['config_error', 'config_external_status', 'next_version'].includes(k))) expect(ours, key).toHaveProperty(key);
  });

  it('DVRs: disk stats and error keys as in the 2025 sample', async () => {
    const want = sample('dvrs_list.json');
    const ours = (await getJson(`${sim.url}/streamer/api/v3/dvrs`)).body;
    expect(typeMismatches(want.dvrs[0], ours.dvrs[0])).toEqual([]);
    expect(Object.keys(ours.dvrs[0].stats.errors).sort()).toEqual(Object.keys(want.dvrs[0].disks[0].stats.errors).sort());
  });
});
