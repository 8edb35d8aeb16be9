/**
 * The poller's contract, through the worker pool and the HTTP app (app.inject), with collectors
 * defined here whose behaviour each test scripts, polled by a runtime on this thread
 * (test/helpers/pool-exporter.ts): what a poll swaps in, what a failure withdraws, what Catena
 * keeps, deadlines, overlap, readiness, reload and stop. The upstream HTTP side is tested against
 * real servers in test/upstream and test/runtime/exporter-sim.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NO_DATA, type CollectorEntry, type CatenaCollector, type CatenaCollectContext } from '../../src/collect/types.js';
import type { ServerConfig } from '../../src/config/types.js';
import { upstreamError } from '../../src/lib/errors.js';
import { familyByName } from '../../src/serve/catalogue.js';
import { createExporter } from '../../src/exporter.js';
import { nextPollAtMs, pollDeadlineMs, pollPhaseMs } from '../../src/poll/schedule.js';
import { targetKey } from '../../src/poll/poller.js';
import { poolExporter, scriptedChannels } from '../helpers/pool-exporter.js';
import { captureLogger, catenaConfig, exporterConfig, serverConfig, type CapturedLog } from '../helpers/runtime.js';
import { samples, value } from '../helpers/exposition.js';

const ALIVE = familyByName('flussonic_stream_alive');
const CPU = familyByName('flussonic_server_cpu_usage_ratio');
const OPS = familyByName('flussonic_catena_operations_total');

type Mode = 'ok' | 'fail' | 'no_data' | 'ignore_signal' | 'honour_signal' | 'wrong_type';

/** What one scripted server "has" and how its collectors behave on the next poll. */
class Script {
  streams = ['a', 'b'];
  mode: Mode = 'ok';
  polls = 0;
  active = 0;
  maxActive = 0;
  created = 0;
  /** Resolved at the start of every poll, for tests that wait for a loop to poll by itself. */
  onPoll: (() => void) | undefined;
}

function scriptedTable(scripts: Map<string, Script>): CollectorEntry[] {
  const scriptOf = (config: ServerConfig) => {
    const s = scripts.get(config.name);
    if (!s) throw new Error(`no script for ${config.name}`);
    return s;
  };
  return [
    {
      name: 'streams',
      defaultEnabled: true,
      create: (config) => {
        const s = scriptOf(config);
        s.created++;
        return {
          async collect({ out, signal }) {
            s.polls++;
            s.active++;
            s.maxActive = Math.max(s.maxActive, s.active);
            s.onPoll?.();
            try {
              // Let other polls run between start and end, as real I/O would.
              await new Promise((r) => setImmediate(r));
              if (s.mode === 'fail') throw upstreamError('http_status', { target: config.name, endpoint: '/streams' }, { status: 500 });
              if (s.mode === 'ignore_signal') await new Promise(() => undefined);
              if (s.mode === 'honour_signal') {
                await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted by signal')), { once: true }));
              }
              if (s.mode === 'no_data') return NO_DATA;
              for (const name of s.streams) out.add(ALIVE, [name], s.mode === 'wrong_type' ? 'yes' : true);
            } finally {
              s.active--;
            }
          },
        };
      },
    },
    {
      name: 'server',
      defaultEnabled: true,
      create: () => ({
        async collect({ out }) {
          out.add(CPU, [], 0.25);
        },
      }),
    },
  ];
}

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
});

function setup(names: string[], options: { overrides?: Partial<ServerConfig> } = {}) {
  const scripts = new Map(names.map((n) => [n, new Script()]));
  const log = captureLogger();
  const servers = names.map((n) => serverConfig(n, 'http://127.0.0.1:9', options.overrides));
  const exporter = poolExporter({
    config: exporterConfig(servers),
    logger: log.logger,
    version: '1.2.3-test',
    channels: scriptedChannels(log.logger, scriptedTable(scripts)),
    size: 1,
  });
  running.push(exporter);
  const metrics = async () => (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
  return { exporter, scripts, log, metrics, script: (n: string) => scripts.get(n)! };
}

function warnings(log: CapturedLog): Record<string, unknown>[] {
  return log.entries().filter((e) => e.level === 40);
}

describe('poller', () => {
  it('swaps in every collector\'s series after a good poll and reports the poll in self-metrics', async () => {
    const { exporter, metrics } = setup(['edge-1']);
    await exporter.pollOnce();
    const text = await metrics();
    expect(value(text, 'flussonic_stream_alive', { server: 'edge-1', stream: 'a' })).toBe(1);
    expect(value(text, 'flussonic_server_cpu_usage_ratio', { server: 'edge-1' })).toBe(0.25);
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    for (const collector of ['streams', 'server']) {
      expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-1', collector })).toBe(1);
      expect(value(text, 'flussonic_exporter_collector_duration_seconds', { server: 'edge-1', collector })).toBeGreaterThanOrEqual(0);
      const last = value(text, 'flussonic_exporter_last_success_timestamp_seconds', { server: 'edge-1', collector })!;
      expect(Math.abs(last - Date.now() / 1000)).toBeLessThan(60);
    }
    // Disabled collectors are not run.
    expect(samples(text, 'flussonic_exporter_collector_success', { collector: 'dvrs' })).toHaveLength(0);
  });

  it('withdraws a failed server\'s upstream series, sets flussonic_up 0, leaves other servers alone, and recovers', async () => {
    const { exporter, metrics, script, log } = setup(['edge-1', 'edge-2']);
    await exporter.pollOnce();
    script('edge-2').mode = 'fail';
    await exporter.pollOnce();
    let text = await metrics();
    expect(value(text, 'flussonic_up', { server: 'edge-2' })).toBe(0);
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-2' })).toHaveLength(0);
    // The collector that did succeed in the same poll is withdrawn too: no partial snapshot.
    expect(samples(text, 'flussonic_server_cpu_usage_ratio', { server: 'edge-2' })).toHaveLength(0);
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-2', collector: 'streams' })).toBe(0);
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-2', collector: 'server' })).toBe(1);
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-1' })).toHaveLength(2);

    const failure = warnings(log).filter((e) => e.server === 'edge-2');
    expect(failure).toHaveLength(1);
    expect(failure[0]).toMatchObject({ collector: 'streams', reason: 'http' });
    expect(String(failure[0]!.msg)).toContain('HTTP 500');

    script('edge-2').mode = 'ok';
    await exporter.pollOnce('edge-2');
    text = await metrics();
    expect(value(text, 'flussonic_up', { server: 'edge-2' })).toBe(1);
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-2' })).toHaveLength(2);
  });

  it('drops a stream that is gone upstream at the next poll', async () => {
    const { exporter, metrics, script } = setup(['edge-1']);
    await exporter.pollOnce();
    script('edge-1').streams = ['a'];
    await exporter.pollOnce();
    const text = await metrics();
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-1' }).map((s) => s.labels.stream)).toEqual(['a']);
  });

  it('treats NO_DATA as success, logged at debug only', async () => {
    const { exporter, metrics, script, log } = setup(['edge-1']);
    script('edge-1').mode = 'no_data';
    await exporter.pollOnce();
    const text = await metrics();
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'edge-1', collector: 'streams' })).toBe(1);
    expect(warnings(log)).toHaveLength(0);
    expect(log.entries().some((e) => e.level === 20 && e.collector === 'streams' && /nothing of its kind/.test(String(e.msg)))).toBe(true);
  });

  it('logs one debug line per poll', async () => {
    const { exporter, log } = setup(['edge-1']);
    await exporter.pollOnce();
    await exporter.pollOnce();
    const lines = log.entries().filter((e) => e.msg === 'poll finished');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 20, server: 'edge-1', ok: true, series: 3, collectors: { streams: 'ok', server: 'ok' } });
  });

  it('cuts a collector that ignores the abort signal off at the poll deadline', async () => {
    const intervalMs = 1000;
    const { exporter, metrics, script, log } = setup(['edge-1'], { overrides: { pollIntervalMs: intervalMs } });
    script('edge-1').mode = 'ignore_signal';
    const started = performance.now();
    await exporter.pollOnce();
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(pollDeadlineMs(intervalMs) - 20);
    expect(took).toBeLessThan(intervalMs + 1000);
    expect(value(await metrics(), 'flussonic_up', { server: 'edge-1' })).toBe(0);
    const failure = warnings(log).find((e) => e.collector === 'streams');
    expect(failure).toMatchObject({ reason: 'timeout' });
    expect(String(failure!.msg)).toContain('poll deadline');
  });

  it('never runs two polls of one target at once', async () => {
    const { exporter, script } = setup(['edge-1']);
    await Promise.all([exporter.pollOnce(), exporter.pollOnce(), exporter.pollOnce('edge-1')]);
    expect(script('edge-1').polls).toBe(3);
    expect(script('edge-1').maxActive).toBe(1);
  });

  it('counts series over max_series as dropped and warns once per poll', async () => {
    const { exporter, metrics, script, log } = setup(['edge-1'], { overrides: { maxSeries: 2 } });
    script('edge-1').streams = ['a', 'b', 'c', 'd', 'e'];
    await exporter.pollOnce();
    const text = await metrics();
    expect(samples(text, 'flussonic_stream_alive', { server: 'edge-1' })).toHaveLength(2);
    expect(value(text, 'flussonic_exporter_series_dropped_total', { server: 'edge-1', collector: 'streams' })).toBe(3);
    expect(value(text, 'flussonic_exporter_series_dropped_total', { server: 'edge-1', collector: 'server' })).toBe(0);
    const drops = warnings(log).filter((e) => /max_series/.test(String(e.msg)));
    expect(drops).toHaveLength(1);
    expect(drops[0]).toMatchObject({ dropped: { streams: 3 }, maxSeries: 2 });
  });

  it('warns once per poll about fields of an unexpected type, with the first few', async () => {
    const { exporter, script, log } = setup(['edge-1']);
    script('edge-1').streams = ['a', 'b', 'c', 'd', 'e'];
    script('edge-1').mode = 'wrong_type';
    await exporter.pollOnce();
    const shape = warnings(log).filter((e) => /unexpected type/.test(String(e.msg)));
    expect(shape).toHaveLength(1);
    expect(shape[0]!.count).toBe(5);
    expect(shape[0]!.first).toHaveLength(3);
    expect((shape[0]!.first as Record<string, unknown>[])[0]).toMatchObject({ collector: 'streams', family: 'flussonic_stream_alive', got: 'string "yes"' });
  });

  it('is not ready until every target finished its first poll attempt, failed or not', async () => {
    const { exporter, script } = setup(['edge-1', 'edge-2']);
    script('edge-2').mode = 'fail';
    const before = await exporter.app.inject({ method: 'GET', url: '/-/ready' });
    expect(before.statusCode).toBe(503);
    expect(before.body).toContain('2 target(s)');
    await exporter.pollOnce('edge-1');
    expect((await exporter.app.inject({ method: 'GET', url: '/-/ready' })).statusCode).toBe(503);
    await exporter.pollOnce('edge-2');
    expect((await exporter.app.inject({ method: 'GET', url: '/-/ready' })).statusCode).toBe(200);
  });

  it('polls by itself once started, and stop() ends the loops', async () => {
    const { exporter, script } = setup(['edge-1'], { overrides: { pollIntervalMs: 60_000 } });
    const polled = new Promise<void>((resolve) => (script('edge-1').onPoll = resolve));
    exporter.start();
    await polled;
    await exporter.stop();
    const polls = script('edge-1').polls;
    await exporter.pollOnce().catch(() => undefined);
    expect(script('edge-1').polls).toBe(polls);
  });

  it('stop() aborts a poll in flight and returns promptly', async () => {
    const { exporter, script } = setup(['edge-1'], { overrides: { pollIntervalMs: 60_000 } });
    script('edge-1').mode = 'honour_signal';
    const polled = new Promise<void>((resolve) => (script('edge-1').onPoll = resolve));
    const poll = exporter.pollOnce();
    await polled;
    const started = performance.now();
    await exporter.stop();
    expect(performance.now() - started).toBeLessThan(1000);
    await poll;
  });
});

describe('reload', () => {
  it('adds and removes targets without restarting the untouched ones; a removed target leaves no series', async () => {
    const { exporter, metrics, scripts } = setup(['edge-1', 'edge-2']);
    await exporter.pollOnce();
    scripts.set('edge-3', new Script());
    const edge1 = scripts.get('edge-1')!;
    exporter.reload(exporterConfig([serverConfig('edge-1', 'http://127.0.0.1:9'), serverConfig('edge-3', 'http://127.0.0.1:9')]));
    await exporter.pollOnce();
    const text = await metrics();
    expect(edge1.created).toBe(1);
    expect(edge1.polls).toBe(2);
    expect(value(text, 'flussonic_up', { server: 'edge-3' })).toBe(1);
    expect(text).not.toContain('server="edge-2"');
    expect(value(text, 'flussonic_up', { server: 'edge-1' })).toBe(1);
  });

  it('replaces a target whose configuration changed', async () => {
    const { exporter, scripts } = setup(['edge-1']);
    await exporter.pollOnce();
    exporter.reload(exporterConfig([serverConfig('edge-1', 'http://127.0.0.1:10')]));
    await exporter.pollOnce();
    expect(scripts.get('edge-1')!.created).toBe(2);
  });

  it('moves a target whose poll interval alone changed onto the new interval, keeping the target and its series', async () => {
    const { exporter, metrics, script, log } = setup(['edge-1'], { overrides: { pollIntervalMs: 60_000 } });
    const edge1 = script('edge-1');
    const first = new Promise<void>((resolve) => (edge1.onPoll = resolve));
    exporter.start();
    await first;
    await exporter.pollOnce(); // the first poll's outcome is in: its series are served
    expect(value(await metrics(), 'flussonic_up', { server: 'edge-1' })).toBe(1);
    // The next loop poll is a minute away; at 300 ms the loop polls three more times within ~1 s.
    const polls = edge1.polls;
    const three = new Promise<void>((resolve) => (edge1.onPoll = () => edge1.polls >= polls + 3 && resolve()));
    exporter.reload(exporterConfig([serverConfig('edge-1', 'http://127.0.0.1:9', { pollIntervalMs: 300 })]));
    const started = Date.now();
    await Promise.race([three, new Promise((resolve) => setTimeout(resolve, 5000))]);
    expect(edge1.polls - polls, 'loop polls within 5 s of the change').toBeGreaterThanOrEqual(3);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(edge1.created).toBe(1);
    expect(exporter.pool.statuses()[0]!.intervalMs).toBe(300);
    expect(log.entries().some((e) => e.msg === 'poll interval changed' && e.fromSeconds === 60 && e.toSeconds === 0.3)).toBe(true);
    expect(log.entries().some((e) => e.msg === 'target configuration changed')).toBe(false);
    expect(value(await metrics(), 'flussonic_up', { server: 'edge-1' })).toBe(1);
  });

  it('sets the config reload self-metrics', async () => {
    const exporter = createExporter({ config: exporterConfig([serverConfig('edge-1', 'http://127.0.0.1:9')]), logger: captureLogger().logger, version: '1.2.3-test' });
    running.push(exporter);
    const metrics = async () => (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(value(await metrics(), 'flussonic_exporter_config_last_reload_success')).toBe(1);
    const firstTs = value(await metrics(), 'flussonic_exporter_config_last_reload_success_timestamp_seconds')!;
    exporter.configReloaded(false);
    const text = await metrics();
    expect(value(text, 'flussonic_exporter_config_last_reload_success')).toBe(0);
    expect(value(text, 'flussonic_exporter_config_last_reload_success_timestamp_seconds')).toBe(firstTs);
  });
});

describe('catena targets', () => {
  /** An operations collector whose counter grows by one per good poll. */
  class CountingCollector implements CatenaCollector {
    count = 0;
    fail = false;
    closed = false;
    async collect({ out }: CatenaCollectContext): Promise<void> {
      if (this.fail) throw upstreamError('http_status', { target: 'billing', endpoint: '/operations' }, { status: 503 });
      this.count++;
      out.add(OPS, ['portal-1', 'createSubscriber'], this.count);
    }
    async close(): Promise<void> {
      this.closed = true;
    }
  }

  it('keeps the last exported counters when a poll fails, with flussonic_catena_up 0', async () => {
    const collector = new CountingCollector();
    const log = captureLogger();
    const exporter = poolExporter({
      config: exporterConfig([], { catena: [catenaConfig('billing', 'http://127.0.0.1:9')] }),
      logger: log.logger,
      version: 'test',
      channels: scriptedChannels(log.logger, [], () => collector),
      size: 1,
    });
    running.push(exporter);
    const metrics = async () => (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
    await exporter.pollOnce();
    await exporter.pollOnce();
    let text = await metrics();
    const labels = { catena: 'billing', portal: 'portal-1', operation: 'createSubscriber' };
    expect(value(text, 'flussonic_catena_operations_total', labels)).toBe(2);
    expect(value(text, 'flussonic_catena_up', { catena: 'billing' })).toBe(1);
    expect(value(text, 'flussonic_exporter_collector_success', { server: 'billing', collector: 'operations' })).toBe(1);

    collector.fail = true;
    await exporter.pollOnce();
    text = await metrics();
    expect(value(text, 'flussonic_catena_up', { catena: 'billing' })).toBe(0);
    expect(value(text, 'flussonic_catena_operations_total', labels)).toBe(2);
    expect(samples(text, 'flussonic_up')).toHaveLength(0);

    exporter.reload(exporterConfig([], { catena: [] }));
    await exporter.pollOnce();
    text = await metrics();
    expect(collector.closed).toBe(true);
    expect(text).not.toContain('billing');
  });
});

describe('poll phase', () => {
  it('spreads targets evenly over the interval, the same for a key every time', () => {
    const interval = 15_000;
    const tenths = new Array<number>(10).fill(0);
    for (let i = 0; i < 1000; i++) {
      const phase = pollPhaseMs(targetKey('server', `edge-${i}`), interval);
      expect(phase).toBeGreaterThanOrEqual(0);
      expect(phase).toBeLessThan(interval);
      tenths[Math.floor(phase / (interval / 10))]!++;
    }
    // 100 expected per tenth; a hash that bunched names would leave tenths near empty.
    for (const n of tenths) expect(n).toBeGreaterThan(65);
    expect(pollPhaseMs('server/edge-1', interval)).toBe(pollPhaseMs('server/edge-1', interval));
    expect(pollPhaseMs('server/edge-1', interval)).not.toBe(pollPhaseMs('catena/edge-1', interval));
  });

  it('puts the next poll on the phase, between half an interval and one and a half after the last start', () => {
    const interval = 15_000;
    for (const phase of [0, 1, 7_500, 14_999]) {
      for (const started of [1_700_000_000_000, 1_700_000_000_000 + phase, 1_700_000_003_217, 1_700_000_014_999]) {
        const next = nextPollAtMs(started, interval, phase);
        expect(next - started).toBeGreaterThan(interval / 2);
        expect(next - started).toBeLessThanOrEqual(interval * 1.5);
        expect((next - phase) % interval).toBe(0);
      }
      // A poll on its phase is followed by the next one a whole interval later.
      const onPhase = 1_700_000_010_000 - (1_700_000_010_000 % interval) + phase;
      expect(nextPollAtMs(onPhase, interval, phase)).toBe(onPhase + interval);
    }
  });

  it('polls two targets started together each on its own phase from the second poll on', async () => {
    const interval = 2000;
    const phase = (name: string) => pollPhaseMs(targetKey('server', name), interval);
    // Two names whose phases are far apart (at least 800 ms of 2 s): polled at the same offset, as
    // the same start at a fixed rate would, one of them would be at least 400 ms off its phase.
    const names = Array.from({ length: 100 }, (_, i) => `edge-${i}`);
    const a = names[0]!;
    const b = names.find((n) => {
      const d = Math.abs(phase(n) - phase(a));
      return Math.min(d, interval - d) >= 800;
    })!;
    const { exporter, script } = setup([a, b], { overrides: { pollIntervalMs: interval } });
    const times = new Map<string, number[]>([[a, []], [b, []]]);
    const done = Promise.all(
      [a, b].map(
        (name) =>
          new Promise<void>((resolve) => {
            script(name).onPoll = () => {
              const t = times.get(name)!;
              t.push(Date.now());
              if (t.length === 3) resolve();
            };
          }),
      ),
    );
    exporter.start();
    await done;
    await exporter.stop();
    for (const name of [a, b]) {
      for (const t of times.get(name)!.slice(1)) {
        const off = Math.abs((((t - phase(name)) % interval) + interval) % interval);
        // Timers fire late on a busy machine (CI runs test files side by side), never early.
        expect(Math.min(off, interval - off), `${name}: poll at ${t % interval} ms into the interval, phase ${phase(name)}`).toBeLessThan(350);
      }
    }
  });
});
