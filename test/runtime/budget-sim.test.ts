/**
 * The default series budget (src/families/budget.ts, docs/cardinality.md) with the whole exporter
 * against the embedded simulator: at default settings every stream of a 10,000-stream server is
 * exported within the per-stream budget; over a cap, optional families are shed before any core
 * series, counted per family, with one warning naming the setting to change.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/validate.js';
import type { ServerConfig } from '../../src/config/types.js';
import { createExporter, type Exporter } from '../../src/exporter.js';
import { FAMILY_TIERS, INPUT_ACTIVE_RESERVED, STREAM_SERIES_BUDGET } from '../../src/families/budget.js';
import { familiesOf } from '../../src/families/catalogue.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '@flussonic-exporter/simulator';
import { parseSamples, samples, value, type Sample } from '../helpers/exposition.js';
import { captureLogger, exporterConfig, type CapturedLog } from '../helpers/runtime.js';

const STREAM_FAMILIES = new Set(familiesOf('streams').map((f) => f.name));
const CORE_STREAM_FAMILIES = FAMILY_TIERS.filter((t) => t.tier === 'core' && STREAM_FAMILIES.has(t.family)).map((t) => t.family);

const sims: RunningSimulator[] = [];
const exporters: Exporter[] = [];
afterEach(async () => {
  await Promise.all(exporters.splice(0).map((e) => e.stop()));
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

/** A server entry as the YAML loader makes it from `name` and `url` plus `extra` keys: defaults applied. */
function defaultServer(url: string, extra: Record<string, unknown> = {}): ServerConfig {
  const config = validateConfig({ servers: [{ name: 'edge-1', url, ...extra }] }, { source: 'test', baseDir: '/' });
  return config.servers[0]!;
}

async function run(sim: SimulatorOptions, server: (url: string) => ServerConfig) {
  const s = await startSimulator({ clock: 'manual', churn: false, seed: 3, ...sim });
  sims.push(s);
  const log = captureLogger();
  const config = server(s.url);
  const exporter = createExporter({ config: exporterConfig([config]), logger: log.logger, version: 'test' });
  exporters.push(exporter);
  const poll = async () => {
    await exporter.pollOnce();
    return (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
  };
  return { sim: s, log, poll };
}

/** Series per stream from the stream families, but for input_active (its 2 are kept apart in the budget). */
function perStream(all: readonly Sample[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of all) {
    if (!STREAM_FAMILIES.has(s.name) || s.name === 'flussonic_stream_input_active') continue;
    counts.set(s.labels.stream!, (counts.get(s.labels.stream!) ?? 0) + 1);
  }
  return counts;
}

function overBudgetWarnings(log: CapturedLog) {
  return log.entries().filter((e) => e.level === 40 && /max_series/.test(String(e.msg)));
}

describe('default series budget', () => {
  it('exports every stream of a 10,000-stream server at default settings, within the per-stream budget', async () => {
    const { sim, log, poll } = await run({ streams: 10_000, sessions: 20_000, shape: 'flat' }, (url) => defaultServer(url));
    const text = await poll();
    const names = sim.world.streams.names();
    expect(names).toHaveLength(10_000);
    const all = parseSamples(text); // once: 10,000 streams make ~200,000 lines
    const counts = perStream(all);
    expect(counts.size).toBe(10_000);
    expect(new Set(all.filter((s) => s.name === 'flussonic_stream_alive').map((s) => s.labels.stream))).toEqual(new Set(names));
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(STREAM_SERIES_BUDGET - INPUT_ACTIVE_RESERVED);
    for (const family of CORE_STREAM_FAMILIES) expect(all.filter((s) => s.name === family).length).toBeGreaterThanOrEqual(10_000);
    const self = all.filter((s) => s.name.startsWith('flussonic_exporter_series_'));
    expect(self.filter((s) => s.name === 'flussonic_exporter_series_dropped_total').every((s) => s.value === 0)).toBe(true);
    expect(self.filter((s) => s.name === 'flussonic_exporter_series_shed_total')).toHaveLength(0);
    expect(overBudgetWarnings(log)).toHaveLength(0);
  }, 120_000);

  it('keeps the nested (2025) shape within the per-stream budget too', async () => {
    const { poll } = await run({ streams: 300, sessions: 600, shape: 'nested', gpus: 2 }, (url) => defaultServer(url));
    const counts = perStream(parseSamples(await poll()));
    expect(counts.size).toBe(300);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(STREAM_SERIES_BUDGET - INPUT_ACTIVE_RESERVED);
  });
});

describe('over max_series', () => {
  const everything = { tracks: true, transcoder_tracks: true, pushes: true, input_errors: true, details: true, transcoder: true, dvr: true };

  it('sheds optional families whole, in table order, before any core series; counts them; warns once naming the switch', async () => {
    const streams = 200;
    // Measure what everything makes, then cap between core + default and everything.
    const probe = await run({ streams, sessions: 10, shape: 'nested' }, (url) => defaultServer(url, { families: everything }));
    const full = parseSamples(await probe.poll()).filter((s) => STREAM_FAMILIES.has(s.name));
    const countOf = (family: string) => full.filter((s) => s.name === family || s.name.startsWith(`${family}_`)).length;
    const nonOptional = FAMILY_TIERS.filter((t) => t.tier !== 'optional' && STREAM_FAMILIES.has(t.family)).reduce((n, t) => n + countOf(t.family), 0);
    const tracks = ['flussonic_stream_track_info', 'flussonic_stream_track_bitrate_bytes_per_second', 'flussonic_stream_track_frames_per_second', 'flussonic_stream_track_gop_frames'];
    const trackSeries = tracks.reduce((n, f) => n + countOf(f), 0);
    expect(trackSeries).toBeGreaterThan(0);
    const cap = full.length - trackSeries; // exactly the tracks group has to go

    const { log, poll } = await run({ streams, sessions: 10, shape: 'nested' }, (url) => defaultServer(url, { families: everything, max_series: cap }));
    const text = await poll();
    const left = parseSamples(text).filter((s) => STREAM_FAMILIES.has(s.name));
    expect(left).toHaveLength(cap);
    expect(left.some((s) => tracks.includes(s.name))).toBe(false);
    for (const family of tracks) {
      expect(value(text, 'flussonic_exporter_series_shed_total', { server: 'edge-1', collector: 'streams', family })).toBe(countOf(family));
    }
    expect(samples(text, 'flussonic_exporter_series_shed_total')).toHaveLength(tracks.filter((f) => countOf(f) > 0).length);
    expect(value(text, 'flussonic_exporter_series_dropped_total', { server: 'edge-1', collector: 'streams' })).toBe(0);
    const warnings = overBudgetWarnings(log);
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]!.msg)).toContain('servers[edge-1].families.tracks');
    expect(String(warnings[0]!.msg)).toContain('servers[edge-1].max_series');

    // The same series survive the next poll; the counter grows by the same amounts.
    const again = await poll();
    expect(parseSamples(again).filter((s) => STREAM_FAMILIES.has(s.name)).map((s) => s.name + JSON.stringify(s.labels)).sort()).toEqual(
      left.map((s) => s.name + JSON.stringify(s.labels)).sort(),
    );
    expect(value(again, 'flussonic_exporter_series_shed_total', { server: 'edge-1', collector: 'streams', family: tracks[0]! })).toBe(2 * countOf(tracks[0]!));
    expect(overBudgetWarnings(log)).toHaveLength(2);
    expect(nonOptional).toBeLessThan(cap);
  });

  it('drops core series only when core alone exceeds the cap, the same streams every poll', async () => {
    const { poll, log } = await run({ streams: 50, sessions: 10, shape: 'flat' }, (url) => defaultServer(url, { families: everything, max_series: 100 }));
    const first = await poll();
    const alive = samples(first, 'flussonic_stream_alive').map((s) => s.labels.stream);
    const upstream = parseSamples(first).filter((s) => STREAM_FAMILIES.has(s.name));
    expect(upstream).toHaveLength(100);
    // Only core families are left, and the streams kept are a prefix of the upstream's order.
    expect(new Set(upstream.map((s) => s.name))).toEqual(new Set(CORE_STREAM_FAMILIES));
    expect(value(first, 'flussonic_exporter_series_dropped_total', { server: 'edge-1', collector: 'streams' })).toBeGreaterThan(0);
    expect(String(overBudgetWarnings(log)[0]!.msg)).toMatch(/dropped \d+ core series/);
    const second = await poll();
    expect(samples(second, 'flussonic_stream_alive').map((s) => s.labels.stream)).toEqual(alive);
  });
});
