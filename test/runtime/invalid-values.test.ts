/**
 * Upstream values are checked against each family's valid range (src/families/ranges.ts), so a
 * negative counter, a CPU ratio of -0.14 or a GPU at -42 °C is never exported. Values outside the
 * range are dropped, counted per family and logged, and a poll of mostly nonsense (every number
 * negated) fails with `invalid_values` so the server is `up 0`. The unmodified simulator passes
 * clean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExporter, type Exporter } from '../../src/exporter.js';
import { CATALOGUE, familyByName } from '../../src/serve/catalogue.js';
import { inRange } from '../../src/families/ranges.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { parseSamples, samples, value } from '../helpers/exposition.js';
import { captureLogger, exporterConfig, serverConfig } from '../helpers/runtime.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

/** Every number in a JSON document, negated (0 stays 0; strings and booleans stay). */
function negate(doc: unknown): unknown {
  if (typeof doc === 'number') return doc === 0 ? 0 : -doc;
  if (Array.isArray(doc)) return doc.map(negate);
  if (doc !== null && typeof doc === 'object') return Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, negate(v)]));
  return doc;
}

let sim: RunningSimulator;
let proxy: ScriptedUpstream;
const running: Exporter[] = [];
beforeAll(async () => {
  sim = await startSimulator({ streams: 20, sessions: 40, gpus: 2, clock: 'manual', churn: false, seed: 5, shape: 'nested' });
  // A Flussonic that answers with every number negated: the simulator's answers, rewritten.
  proxy = await startScripted((req) => async (res) => {
    const query = new URLSearchParams(req.query).toString();
    const upstream = await fetch(`${sim.url}${req.path}${query ? `?${query}` : ''}`, { signal: AbortSignal.timeout(5000) });
    const body = JSON.stringify(negate(await upstream.json()));
    res.writeHead(upstream.status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
});
afterAll(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
  await Promise.all([proxy?.close(), sim?.close()]);
});

async function pollOf(url: string) {
  const log = captureLogger();
  const exporter = createExporter({ config: exporterConfig([serverConfig('edge', url)]), logger: log.logger, version: 'test' });
  running.push(exporter);
  await exporter.pollOnce('edge');
  return { log, text: (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body };
}

/** Upstream samples (families the collectors fill) that are outside their family's range. */
function outOfRange(text: string) {
  const now = Date.now() / 1000;
  const upstream = new Map(CATALOGUE.filter((f) => f.owner !== 'self').map((f) => [f.name, f]));
  return parseSamples(text).filter((s) => {
    const def = upstream.get(s.name.replace(/_(bucket|sum|count)$/, '')) ?? upstream.get(s.name);
    return def !== undefined && !s.name.endsWith('_bucket') && !inRange(def.range, s.value, now);
  });
}

describe('upstream values checked against the catalogue', () => {
  it('the unmodified simulator: every value in range, nothing counted as invalid, up 1', async () => {
    const { text } = await pollOf(sim.url);
    expect(value(text, 'flussonic_up', { server: 'edge' })).toBe(1);
    expect(outOfRange(text)).toEqual([]);
    expect(samples(text, 'flussonic_exporter_invalid_values_total')).toEqual([]);
    expect(samples(text, 'flussonic_transcoder_device_temperature_celsius').length).toBe(2);
  });

  it('every number negated: no value out of range is exported, each family is counted, the poll fails with invalid_values and is logged', async () => {
    const { text, log } = await pollOf(proxy.url);
    expect(outOfRange(text)).toEqual([]);
    expect(parseSamples(text).filter((s) => s.value < 0)).toEqual([]);
    expect(value(text, 'flussonic_up', { server: 'edge' })).toBe(0);
    // The poll failed, so the series of the nonsense answer were withdrawn as a whole.
    expect(samples(text, 'flussonic_server_cpu_usage_ratio')).toEqual([]);
    const counted = new Map(samples(text, 'flussonic_exporter_invalid_values_total', { server: 'edge' }).map((s) => [s.labels.family, s.value]));
    for (const family of ['flussonic_server_cpu_usage_ratio', 'flussonic_transcoder_device_temperature_celsius', 'flussonic_stream_received_bytes_total']) {
      expect(familyByName(family).name).toBe(family);
      expect(counted.get(family), family).toBeGreaterThan(0);
    }
    expect(counted.get('flussonic_transcoder_device_temperature_celsius')).toBe(2);
    const entries = log.entries();
    const warned = entries.filter((e) => e.msg === 'upstream values outside their valid range were not exported');
    expect(warned).toHaveLength(1);
    expect(warned[0]!.count).toBe([...counted.values()].reduce((a, b) => a + b, 0));
    expect((warned[0]!.first as { family: string; labels: string[]; value: number }[]).every((f) => f.value < 0 && f.family.startsWith('flussonic_'))).toBe(true);
    const failed = entries.filter((e) => String(e.msg).startsWith('collector failed: ') && e.reason === 'invalid_values');
    expect(failed.length).toBeGreaterThan(0);
  });
});

describe('a session whose timestamps are outside their valid range', () => {
  it('is not observed in the duration histogram, which stays exported; counted once under its family, the server up', async () => {
    const T = sim.now();
    const extra = [
      { id: 'zz-good', name: 'x', proto: 'hls', bytes: 1, opened_at: T - 60_000, closed_at: T },
      // closed_at - opened_at overflows to +Inf.
      { id: 'zz-pair', name: 'x', proto: 'hls', bytes: 1, opened_at: -1e308, closed_at: 1e308 },
    ];
    // The simulator's sessions with two more on the first page.
    const upstream = await startScripted((req) => async (res) => {
      const query = new URLSearchParams(req.query).toString();
      const answer = await fetch(`${sim.url}${req.path}${query ? `?${query}` : ''}`, { signal: AbortSignal.timeout(5000) });
      const doc = (await answer.json()) as { sessions?: unknown[] };
      if (req.path.endsWith('/sessions') && req.query.cursor === undefined) doc.sessions = [...(doc.sessions ?? []), ...extra];
      const body = JSON.stringify(doc);
      res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    });
    try {
      const exporter = createExporter({ config: exporterConfig([serverConfig('edge', upstream.url)]), logger: captureLogger().logger, version: 'test' });
      running.push(exporter);
      for (let poll = 0; poll < 2; poll++) {
        await exporter.pollOnce('edge');
        const text = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
        expect(value(text, 'flussonic_up', { server: 'edge' })).toBe(1);
        expect(value(text, 'flussonic_session_duration_seconds_sum', { server: 'edge', proto: 'hls' })).toBe(60);
        expect(value(text, 'flussonic_session_duration_seconds_count', { server: 'edge', proto: 'hls' })).toBe(1);
        expect(value(text, 'flussonic_exporter_invalid_values_total', { server: 'edge', family: 'flussonic_session_duration_seconds' })).toBe(1);
      }
    } finally {
      await upstream.close();
    }
  });
});
