/**
 * The sessions collector against the embedded simulator, whose manual clock drives churn: after
 * every step the exported aggregates must agree with what the simulator served.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionsCollector, type SessionsCollector } from '../../src/collect/sessions.js';
import { sessionsSelect } from '../../src/collect/sessions-select.js';
import { groupKey, isKeyOf, valuesOfKey } from '../../src/collect/sessions-groups.js';
import { NO_DATA } from '../../src/collect/types.js';
import type { ServerConfig } from '../../src/config/types.js';
import { FlussonicClient } from '../../src/flussonic/client.js';
import { SESSION_DURATION_BUCKETS } from '../../src/collect/sessions.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { SelfMetrics } from '../../src/serve/self.js';
import { SeriesWriter } from '../../src/render/series.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '@flussonic-exporter/simulator';
import { parseSamples, samples, type Sample } from '../helpers/exposition.js';
import { serverConfig } from '../helpers/runtime.js';
import { startScripted } from '../helpers/scripted-upstream.js';
import { expectPromtoolClean } from './helpers.js';

const SERVER = 'edge-1';
/** A stale_after longer than any test's simulated time: every group is kept. */
const KEEP_ALL = 365 * 86_400_000;
type Doc = Readonly<Record<string, unknown>>;

interface Rig {
  readonly sim: RunningSimulator;
  readonly collector: SessionsCollector;
  config: ServerConfig;
  /** One poll; resolves to the exposition text of its samples (and the writer). */
  poll(maxSeries?: number): Promise<{ text: string; out: SeriesWriter }>;
  /** The collector's committed state as exposition text, without polling. */
  state(): string;
}

const rigs: Rig[] = [];
afterEach(async () => {
  await Promise.all(rigs.splice(0).map((r) => r.sim.close()));
});

async function rig(options: SimulatorOptions, config: Partial<ServerConfig> = {}): Promise<Rig> {
  const sim = await startSimulator({ clock: 'manual', streams: 8, sessions: 120, seed: 7, ...options });
  const self = new SelfMetrics({ version: 'test', defaultMetrics: false });
  const collector = createSessionsCollector({ now: () => sim.now() });
  const log = pino({ level: 'silent' });
  const r: Rig = {
    sim,
    collector,
    config: serverConfig(SERVER, sim.url, { pageSize: 25, ...config }),
    async poll(maxSeries = Number.POSITIVE_INFINITY) {
      const client = new FlussonicClient({ config: r.config, stats: self.apiStats(SERVER), retryBackoffMs: 1 });
      try {
        const out = new SeriesWriter([['server', SERVER]], maxSeries);
        const outcome = await collector.collect({ client, config: r.config, signal: AbortSignal.timeout(10_000), log, out });
        expect(outcome).not.toBe(NO_DATA);
        return { text: render(out), out };
      } finally {
        await client.destroy();
      }
    },
    state() {
      const out = new SeriesWriter([['server', SERVER]]);
      collector.write(out);
      return render(out);
    },
  };
  rigs.push(r);
  return r;
}

function render(out: SeriesWriter): string {
  const cache = new ExpositionCache();
  cache.swap(SERVER, out.render());
  return cache.current.text;
}

/** Sample values of a family keyed by the given labels joined with '|'. */
function byGroup(list: readonly Sample[], labels: readonly string[]): Map<string, number> {
  return new Map(list.map((s) => [labels.map((l) => s.labels[l] ?? '?').join('|'), s.value]));
}

function labelOf(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'boolean' ? String(v) : String(v);
}

const FIELD: Record<string, string> = { stream: 'name' };

/** Open sessions per group as the simulator sees them. */
function openPerGroup(sim: RunningSimulator, groupBy: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of sim.world.sessions.list()) {
    const key = groupBy.map((l) => labelOf(s[FIELD[l] ?? l])).join('|');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

function total(list: readonly Sample[]): number {
  return list.reduce((sum, s) => sum + s.value, 0);
}

/**
 * What the collector must have concluded from the sessions served at each poll: every id ever seen
 * with its last seen bytes, and the lifetime of every one that closed (closed_at, or the time of
 * the last poll that listed it, minus opened_at).
 */
class Witness {
  readonly lastBytes = new Map<string, number>();
  readonly group = new Map<string, string>();
  readonly proto = new Map<string, string>();
  private listedAt = new Map<string, { openedAt: number; seenAt: number; closedAt?: number }>();
  private closedIds = new Set<string>();
  readonly durations: { proto: string; seconds: number }[] = [];

  constructor(private readonly groupBy: readonly string[]) {}

  observe(served: readonly Doc[], now: number, previousPollAt: number): void {
    const present = new Set<string>();
    for (const s of served) {
      const id = s.id as string;
      present.add(id);
      this.lastBytes.set(id, s.bytes as number);
      this.group.set(id, this.groupBy.map((l) => labelOf(s[FIELD[l] ?? l])).join('|'));
      this.proto.set(id, s.proto as string);
      const closedAt = typeof s.closed_at === 'number' ? s.closed_at : undefined;
      this.listedAt.set(id, { openedAt: s.opened_at as number, seenAt: now, closedAt });
      if (closedAt !== undefined && !this.closedIds.has(id)) this.close(id, closedAt);
    }
    for (const [id, seen] of this.listedAt) {
      if (present.has(id)) continue;
      if (!this.closedIds.has(id)) this.close(id, previousPollAt);
      this.listedAt.delete(id);
    }
  }

  private close(id: string, endMs: number): void {
    this.closedIds.add(id);
    const seen = this.listedAt.get(id)!;
    this.durations.push({ proto: this.proto.get(id)!, seconds: Math.max(0, (endMs - seen.openedAt) / 1000) });
  }

  get closed(): number {
    return this.closedIds.size;
  }
}

describe('sessions collector against the simulator, with churn on its manual clock', () => {
  it('keeps gauge, opened, closed and bytes true to what was served at every step', async () => {
    // Totals over the whole history: no group may be withdrawn here (stale_after has its own tests).
    const r = await rig({ churn: true, sessions: 150 }, { staleAfterMs: KEEP_ALL });
    const groupBy = r.config.sessionsGroupBy;
    const witness = new Witness(groupBy);
    let previousPollAt = Number.NaN;
    let closedSomewhere = 0;
    for (let step = 0; step < 8; step++) {
      if (step > 0) r.sim.advance(5 * 60_000);
      const { text } = await r.poll();
      witness.observe(r.sim.world.sessions.served(), r.sim.now(), previousPollAt);
      previousPollAt = r.sim.now();

      const labels = ['stream', 'proto'];
      // Groups come out in one stable order (by label values), also as new groups appear.
      const order = samples(text, 'flussonic_sessions').map((s) => `${s.labels.stream}\u001f${s.labels.proto}`);
      expect(order).toEqual([...order].sort());
      const gauge = byGroup(samples(text, 'flussonic_sessions'), labels);
      const expected = openPerGroup(r.sim, groupBy);
      for (const [group, n] of expected) expect(gauge.get(group), `open sessions of ${group} at step ${step}`).toBe(n);
      for (const [group, n] of gauge) expect(n, `gauge of ${group} at step ${step}`).toBe(expected.get(group) ?? 0);

      const opened = byGroup(samples(text, 'flussonic_sessions_opened_total'), labels);
      const closed = byGroup(samples(text, 'flussonic_sessions_closed_total'), labels);
      for (const [group, n] of gauge) expect((opened.get(group) ?? 0) - (closed.get(group) ?? 0), `opened - closed of ${group}`).toBe(n);
      expect(total(samples(text, 'flussonic_sessions_opened_total'))).toBe(witness.lastBytes.size);
      expect(total(samples(text, 'flussonic_sessions_closed_total'))).toBe(witness.closed);

      const bytes = byGroup(samples(text, 'flussonic_sessions_sent_bytes_total'), labels);
      const expectedBytes = new Map<string, number>();
      for (const [id, b] of witness.lastBytes) expectedBytes.set(witness.group.get(id)!, (expectedBytes.get(witness.group.get(id)!) ?? 0) + b);
      expect(bytes).toEqual(expectedBytes);
      closedSomewhere = witness.closed;
    }
    // The scenario really exercised churn.
    expect(closedSomewhere).toBeGreaterThan(20);
  });

  it('observes closed_at of lingering sessions, and last-seen time of vanished ones, in the duration histogram', async () => {
    const r = await rig({ churn: true, sessions: 150, sessionLingerMs: 3 * 60_000 }, { staleAfterMs: KEEP_ALL });
    const witness = new Witness(r.config.sessionsGroupBy);
    let previousPollAt = Number.NaN;
    let text = '';
    for (let step = 0; step < 6; step++) {
      if (step > 0) r.sim.advance(step % 2 === 0 ? 2 * 60_000 : 7 * 60_000); // some closings seen with closed_at, some not
      text = (await r.poll()).text;
      witness.observe(r.sim.world.sessions.served(), r.sim.now(), previousPollAt);
      previousPollAt = r.sim.now();
    }
    const protos = new Set(witness.durations.map((d) => d.proto));
    expect(protos.size).toBeGreaterThan(1);
    for (const proto of protos) {
      const mine = witness.durations.filter((d) => d.proto === proto);
      expect(samples(text, 'flussonic_session_duration_seconds_count', { proto })[0]?.value).toBe(mine.length);
      expect(samples(text, 'flussonic_session_duration_seconds_sum', { proto })[0]?.value).toBeCloseTo(
        mine.reduce((s, d) => s + d.seconds, 0),
        3,
      );
      for (const le of SESSION_DURATION_BUCKETS) {
        expect(samples(text, 'flussonic_session_duration_seconds_bucket', { proto, le: String(le) })[0]?.value).toBe(mine.filter((d) => d.seconds <= le).length);
      }
    }
    // Closed sessions still listed are not counted as open, nor closed twice.
    expect(r.sim.world.sessions.served().length).toBeGreaterThan(r.sim.world.sessions.size);
    expect(total(samples(text, 'flussonic_sessions'))).toBe(r.sim.world.sessions.size);
    expect(total(samples(text, 'flussonic_sessions_closed_total'))).toBe(witness.closed);
  });

  it('adds all bytes of a new session, the growth of a known one, and nothing when bytes shrink', async () => {
    const r = await rig({ churn: false, sessions: 0, streams: 2 });
    const stream = r.sim.world.streams.names()[0]!;
    const a = r.sim.world.sessions.open({ name: stream, proto: 'hls', bytes: 1000, bytesPerSecond: 0 });
    const bytesOf = async () => samples((await r.poll()).text, 'flussonic_sessions_sent_bytes_total', { stream, proto: 'hls' })[0]?.value;
    expect(await bytesOf()).toBe(1000);
    (a as Record<string, unknown>).bytes = 1500;
    expect(await bytesOf()).toBe(1500);
    (a as Record<string, unknown>).bytes = 200; // a server-side reset: adds 0, and 200 is the new base
    expect(await bytesOf()).toBe(1500);
    (a as Record<string, unknown>).bytes = 700;
    expect(await bytesOf()).toBe(2000);
  });

  it('keeps exporting the counters of a group whose sessions all closed, with a gauge of 0', async () => {
    const r = await rig({ churn: false, sessions: 0, streams: 2 });
    const stream = r.sim.world.streams.names()[0]!;
    const s = r.sim.world.sessions.open({ name: stream, proto: 'dash', bytes: 42, bytesPerSecond: 0 });
    await r.poll();
    r.sim.world.sessions.close(s.id as string);
    r.sim.advance(1000);
    const { text } = await r.poll();
    const labels = { stream, proto: 'dash' };
    expect(samples(text, 'flussonic_sessions', labels)[0]?.value).toBe(0);
    expect(samples(text, 'flussonic_sessions_opened_total', labels)[0]?.value).toBe(1);
    expect(samples(text, 'flussonic_sessions_closed_total', labels)[0]?.value).toBe(1);
    expect(samples(text, 'flussonic_sessions_sent_bytes_total', labels)[0]?.value).toBe(42);
    expect(r.collector.trackedSessions).toBe(0);
  });
});

describe('a poll that fails part-way through the walk', () => {
  for (const fault of [{ status: 500 }, { truncateBody: true }, { malformedJson: true }] as const) {
    it(`changes no counter and keeps the previous state (${Object.keys(fault)[0]} after the first page)`, async () => {
      const r = await rig({ churn: true, sessions: 150 });
      await r.poll();
      const before = r.state();
      const trackedBefore = r.collector.trackedSessions;
      r.sim.advance(10 * 60_000); // sessions closed and opened since: none of it may be counted yet
      // A new session on the first page, which the failing walk does read.
      r.sim.world.sessions.open({ id: '00000000-0000-4000-8000-000000000001', bytes: 10_000 });
      r.sim.faults.set('/sessions', { ...fault, afterFirstPage: true });
      await expect(r.poll()).rejects.toThrow(/\/sessions/);
      expect(r.sim.requests.count('/sessions')).toBeGreaterThan(1);
      expect(r.state()).toBe(before);
      expect(r.collector.trackedSessions).toBe(trackedBefore);

      // The next good poll counts everything exactly once.
      r.sim.faults.clear();
      const { text } = await r.poll();
      const open = r.sim.world.sessions.size;
      expect(total(samples(text, 'flussonic_sessions'))).toBe(open);
      expect(total(samples(text, 'flussonic_sessions_opened_total')) - total(samples(text, 'flussonic_sessions_closed_total'))).toBe(open);
      const expectedGauge = openPerGroup(r.sim, ['stream', 'proto']);
      const gauge = byGroup(samples(text, 'flussonic_sessions'), ['stream', 'proto']);
      for (const [group, n] of expectedGauge) expect(gauge.get(group)).toBe(n);
    });
  }
});

describe('the good poll after a failed one', () => {
  it('counts the bytes it reads itself, not those the failed walk read', async () => {
    const r = await rig({ churn: false, sessions: 60 });
    await r.poll();
    r.sim.advance(60_000);
    r.sim.faults.set('/sessions', { status: 500, afterFirstPage: true });
    await expect(r.poll()).rejects.toThrow(/\/sessions/);
    r.sim.faults.clear();
    r.sim.advance(60_000); // the sessions of the first page grew again since the failed walk read them
    const { text } = await r.poll();
    const served = r.sim.world.sessions.list().reduce((sum, s) => sum + (s.bytes as number), 0);
    expect(served).toBeGreaterThan(0);
    expect(total(samples(text, 'flussonic_sessions_sent_bytes_total'))).toBe(served);
  });
});

describe('grouping', () => {
  it('asks only for the fields it needs, and never for identifying ones', async () => {
    const r = await rig({ churn: false }, { sessionsGroupBy: ['country', 'dvr'] });
    await r.poll();
    const queries = r.sim.requests.entries().filter((e) => e.apiPath === '/sessions');
    expect(queries.length).toBeGreaterThan(1);
    for (const q of queries) {
      expect(q.query.select).toBe('id,bytes,opened_at,closed_at,proto,country,dvr');
      expect(q.query.limit).toBe('25');
    }
    expect(sessionsSelect(['stream', 'proto'])).toEqual(['id', 'bytes', 'opened_at', 'closed_at', 'proto', 'name']);
  });

  const variants: readonly (readonly string[])[] = [['proto'], ['country', 'dvr', 'secure'], ['stream', 'segments_container', 'manifest_type'], ['secure', 'stream']];
  for (const groupBy of variants) {
    it(`groups by ${groupBy.join(', ')} with labels in that order`, async () => {
      const r = await rig({ churn: true, sessions: 150 }, { sessionsGroupBy: groupBy });
      r.sim.advance(60_000);
      const { text } = await r.poll();
      const gauges = samples(text, 'flussonic_sessions');
      expect(gauges.length).toBeGreaterThan(1);
      for (const s of gauges) expect(Object.keys(s.labels)).toEqual(['server', ...groupBy]);
      const got = byGroup(gauges, groupBy);
      const expected = openPerGroup(r.sim, groupBy);
      expect(new Map([...got].filter(([, n]) => n > 0))).toEqual(expected);
      if (groupBy.includes('dvr') || groupBy.includes('secure')) {
        const values = new Set(gauges.map((s) => s.labels[groupBy.includes('dvr') ? 'dvr' : 'secure']));
        expect([...values].sort()).toEqual(['false', 'true']);
      }
      if (groupBy.includes('segments_container')) {
        // rtmp/webrtc sessions have no segments container: an empty label value, not a missing series.
        expect(gauges.some((s) => s.labels.segments_container === '')).toBe(true);
      }
      expectPromtoolClean(text);
    });
  }

  it('applies the stream include/exclude filter: sessions of other streams are not counted', async () => {
    const r = await rig({ churn: false, streams: 6, sessions: 200 });
    const watched = [...openPerGroup(r.sim, ['stream'])].sort((x, y) => y[1] - x[1]).map(([name]) => name);
    expect(watched.length).toBeGreaterThan(2);
    const kept = new Set(watched.slice(0, 2));
    const include = { source: [...kept].map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|') };
    r.config = { ...r.config, streams: { include } };
    const { text } = await r.poll();
    const streams = new Set(samples(text, 'flussonic_sessions').map((s) => s.labels.stream));
    expect(streams).toEqual(kept);
    const expected = r.sim.world.sessions.list().filter((s) => kept.has(s.name as string)).length;
    expect(total(samples(text, 'flussonic_sessions'))).toBe(expected);
    expect(r.collector.trackedSessions).toBe(expected);

    r.config = { ...r.config, streams: { exclude: include } };
    const excluded = (await r.poll()).text;
    const rest = new Set(samples(excluded, 'flussonic_sessions').map((s) => s.labels.stream));
    for (const name of kept) expect(rest.has(name)).toBe(false);
    // A changed filter starts the counters again: what was counted under the old filter is gone.
    expect(total(samples(excluded, 'flussonic_sessions_opened_total'))).toBe(r.sim.world.sessions.list().filter((s) => !kept.has(s.name as string)).length);
  });
});

describe('max_series', () => {
  it('sheds the histograms first, then drops groups beyond the cap, counts both and keeps the same series every poll', async () => {
    const r = await rig({ churn: false, sessions: 150 });
    await r.poll();
    const s = r.sim.world.sessions.list()[0]!;
    r.sim.world.sessions.close(s.id as string); // a closed session: a histogram, shed before any group
    r.sim.advance(1000);
    const full = await r.poll();
    const all = parseSamples(full.text);
    const histograms = new Set(samples(full.text, 'flussonic_session_duration_seconds_count').map((s) => s.labels.proto)).size;
    const groups = samples(full.text, 'flussonic_sessions').length;
    expect(histograms).toBe(1);
    expect(full.out.series).toBe(histograms + groups * 4);
    expect(all.length).toBe(histograms * (SESSION_DURATION_BUCKETS.length + 3) + groups * 4);

    // Over the cap, the histograms (default tier) go whole; then group series past the cap drop.
    const cap = 4 * 3 + 2; // three whole groups and half of a fourth
    const first = await r.poll(cap);
    expect(first.out.series).toBe(cap);
    expect(first.out.shed).toEqual(new Map([['flussonic_session_duration_seconds', histograms]]));
    expect(first.out.dropped).toBe(groups * 4 - cap);
    const kept = samples(first.text, 'flussonic_sessions').map((s) => `${s.labels.stream}|${s.labels.proto}`);
    expect(kept).toHaveLength(4);
    expect(samples(first.text, 'flussonic_sessions_closed_total')).toHaveLength(3);
    expect(samples(first.text, 'flussonic_session_duration_seconds_count')).toHaveLength(0);
    r.sim.advance(30_000);
    const second = await r.poll(cap);
    expect(samples(second.text, 'flussonic_sessions').map((s) => `${s.labels.stream}|${s.labels.proto}`)).toEqual(kept);
    expectPromtoolClean(second.text);
  });
});

describe('stale_after', () => {
  const key = (d: Doc) => `${labelOf(d.name)}|${labelOf(d.proto)}`;
  const exported = (text: string) => new Set(samples(text, 'flussonic_sessions_opened_total').map((s) => `${s.labels.stream}|${s.labels.proto}`));

  it('withdraws exactly the groups with no session listed within stale_after, under churn', async () => {
    const staleAfterMs = 120_000;
    const r = await rig({ churn: true, sessions: 150, sessionLingerMs: 20_000 }, { staleAfterMs });
    const servedAt: { at: number; groups: Set<string> }[] = [];
    const deleted = r.sim.world.streams.names()[0]!;
    let withdrawnSeen = false;
    for (let step = 0; step < 16; step++) {
      if (step === 2) r.sim.world.streams.delete(deleted); // its sessions close; its groups must go
      const { text } = await r.poll();
      const now = r.sim.now();
      servedAt.push({ at: now, groups: new Set(r.sim.world.sessions.served().map(key)) });
      const expected = new Set(servedAt.filter((p) => p.at >= now - staleAfterMs).flatMap((p) => [...p.groups]));
      const have = exported(text);
      expect([...have].sort()).toEqual([...expected].sort());
      expect(r.collector.groupCount).toBe(have.size);
      const everServed = new Set(servedAt.flatMap((p) => [...p.groups]));
      if (everServed.size > have.size) withdrawnSeen = true;
      r.sim.advance(30_000);
    }
    expect(withdrawnSeen).toBe(true);
    const finalText = (await r.poll()).text;
    expect([...exported(finalText)].some((g) => g.startsWith(`${deleted}|`))).toBe(false);
  });

  it('never withdraws a group with an open session, however long it lives', async () => {
    const r = await rig({ churn: false, sessions: 10 }, { staleAfterMs: 60_000 });
    const stream = r.sim.world.streams.names()[1]!;
    r.sim.world.sessions.open({ name: stream, proto: 'rtmp', bytes: 1, bytesPerSecond: 0 });
    for (let step = 0; step < 6; step++) {
      const { text } = await r.poll();
      expect(exported(text)).toContain(`${stream}|rtmp`);
      r.sim.advance(10 * 60_000);
    }
  });
});

describe('exposition', () => {
  it('is clean for promtool, with escaped label values', async () => {
    const r = await rig({ churn: true, sessions: 100 });
    const stream = 'odd"name\\with/slash';
    r.sim.world.streams.put(stream, { title: 'odd' });
    r.sim.world.sessions.open({ name: stream, proto: 'hls', bytes: 5 });
    r.sim.advance(60_000);
    await r.poll();
    r.sim.advance(20 * 60_000);
    const { text } = await r.poll();
    expect(text).toContain('stream="odd\\"name\\\\with/slash"');
    expect(text).toMatch(/# TYPE flussonic_session_duration_seconds histogram/);
    expectPromtoolClean(text);
  });
});

describe('a session listed on two pages of one walk', () => {
  it('is counted once: one open session, one opening, its bytes once', async () => {
    // The simulator's cursor is the session id itself, so it never repeats one; a scripted upstream
    // does, as a server whose collection changed during the walk may.
    const session = (id: string, bytes: number) => ({ id, name: 'tv', proto: 'hls', bytes, opened_at: 1_767_225_600_000 });
    const pages = [
      { sessions: [session('a', 100), session('b', 200)], next: 'c1' },
      { sessions: [session('b', 250), session('c', 300)], next: null },
    ];
    const upstream = await startScripted((_req, i) => ({ json: pages[i] }));
    const config = serverConfig(SERVER, upstream.url, { pageSize: 2 });
    const client = new FlussonicClient({ config, stats: new SelfMetrics({ version: 'test', defaultMetrics: false }).apiStats(SERVER), retryBackoffMs: 1 });
    try {
      const collector = createSessionsCollector({ now: () => 1_767_225_660_000 });
      const out = new SeriesWriter([['server', SERVER]]);
      await collector.collect({ client, config, signal: AbortSignal.timeout(10_000), log: pino({ level: 'silent' }), out });
      const text = render(out);
      const group = { server: SERVER, stream: 'tv', proto: 'hls' };
      expect(samples(text, 'flussonic_sessions', group).map((s) => s.value)).toEqual([3]);
      expect(samples(text, 'flussonic_sessions_opened_total', group).map((s) => s.value)).toEqual([3]);
      // b counts with the bytes of its first listing; the second listing of the same walk is ignored.
      expect(samples(text, 'flussonic_sessions_sent_bytes_total', group).map((s) => s.value)).toEqual([600]);
    } finally {
      await client.destroy();
      await upstream.close();
    }
  });
});

describe('a session whose timestamps are outside their valid range (Unix ms 10^12 to 10^13)', () => {
  it('is counted closed without its lifetime: the histogram stays finite and exported, the values are counted as invalid', async () => {
    const T = 1_767_225_600_000;
    const session = (id: string, more: Doc) => ({ id, name: 'tv', proto: 'hls', bytes: 1, ...more });
    const good = session('good', { opened_at: T, closed_at: T + 60_000 });
    // A pair whose difference overflows to +Inf, a closed_at past 2286, an opened_at in seconds (gone by the second poll).
    const pair = session('pair', { opened_at: -1e308, closed_at: 1e308 });
    const late = session('late', { opened_at: T, closed_at: 1e300 });
    const seconds = session('seconds', { opened_at: T / 1000 });
    const polls = [[good, pair, late, seconds], [good, pair, late]];
    const upstream = await startScripted((_req, i) => ({ json: { sessions: polls[Math.min(i, polls.length - 1)], next: null } }));
    const config = serverConfig(SERVER, upstream.url, {});
    const client = new FlussonicClient({ config, stats: new SelfMetrics({ version: 'test', defaultMetrics: false }).apiStats(SERVER), retryBackoffMs: 1 });
    try {
      const collector = createSessionsCollector({ now: () => T + 120_000 });
      const invalid: (number | undefined)[] = [];
      for (let poll = 0; poll < 3; poll++) {
        const out = new SeriesWriter([['server', SERVER]]);
        await collector.collect({ client, config, signal: AbortSignal.timeout(10_000), log: pino({ level: 'silent' }), out });
        invalid.push(out.checks.byFamily.get('flussonic_session_duration_seconds'));
        expect(out.checks.mostlyInvalid).toBe(false);
        const text = render(out);
        const hls = { server: SERVER, proto: 'hls' };
        expect(samples(text, 'flussonic_session_duration_seconds_sum', hls).map((x) => x.value), `poll ${poll}`).toEqual([60]);
        expect(samples(text, 'flussonic_session_duration_seconds_count', hls).map((x) => x.value)).toEqual([1]);
        expect(samples(text, 'flussonic_sessions_closed_total', { server: SERVER, stream: 'tv', proto: 'hls' }).map((x) => x.value)).toEqual([poll === 0 ? 3 : 4]);
      }
      // Each bad session once, when it closes: pair (opened_at) and late (closed_at) at the first poll, seconds (opened_at) when it is gone.
      expect(invalid).toEqual([2, 1, undefined]);
    } finally {
      await client.destroy();
      await upstream.close();
    }
  });
});

describe('a session whose grouping values change while it lives (dvr, manifest_type)', () => {
  it('moves to its new group: gauge and byte growth there, its opening stays where it was counted', async () => {
    const session = (id: string, manifest: string, bytes: number) => ({ id, name: 'tv', proto: 'hls', manifest_type: manifest, bytes, opened_at: 1_767_225_600_000 });
    // The second listing of "x" plays the archive; "y" has a value with both key separators.
    const odd = 'odd\u001fvalue\u001e';
    const polls = [
      [session('x', 'index', 100), session('y', odd, 10)],
      [session('x', 'archive', 150), session('y', odd, 30)],
      [session('x', 'archive', 170), session('y', 'index', 40)],
    ];
    let poll = 0;
    const upstream = await startScripted(() => ({ json: { sessions: polls[poll], next: null } }));
    const config = serverConfig(SERVER, upstream.url, { sessionsGroupBy: ['stream', 'manifest_type'] });
    const client = new FlussonicClient({ config, stats: new SelfMetrics({ version: 'test', defaultMetrics: false }).apiStats(SERVER), retryBackoffMs: 1 });
    try {
      const collector = createSessionsCollector({ now: () => 1_767_225_660_000 + poll * 15_000 });
      const texts: string[] = [];
      for (poll = 0; poll < polls.length; poll++) {
        const out = new SeriesWriter([['server', SERVER]]);
        await collector.collect({ client, config, signal: AbortSignal.timeout(10_000), log: pino({ level: 'silent' }), out });
        texts.push(render(out));
      }
      const group = (manifest: string) => ({ server: SERVER, stream: 'tv', manifest_type: manifest });
      const value = (text: string, family: string, manifest: string) => samples(text, family, group(manifest)).map((s) => s.value);
      const [first, second, third] = texts as [string, string, string];
      expect(value(first, 'flussonic_sessions', 'index')).toEqual([1]);
      expect(value(first, 'flussonic_sessions', odd)).toEqual([1]);
      expect(value(second, 'flussonic_sessions', 'index')).toEqual([0]);
      expect(value(second, 'flussonic_sessions', 'archive')).toEqual([1]);
      expect(value(second, 'flussonic_sessions', odd)).toEqual([1]);
      // Opened where it was first seen; the growth after the move counts in the new group.
      expect(value(second, 'flussonic_sessions_opened_total', 'index')).toEqual([1]);
      expect(value(second, 'flussonic_sessions_opened_total', 'archive')).toEqual([0]);
      expect(value(second, 'flussonic_sessions_sent_bytes_total', 'index')).toEqual([100]);
      expect(value(second, 'flussonic_sessions_sent_bytes_total', 'archive')).toEqual([50]);
      expect(value(second, 'flussonic_sessions_sent_bytes_total', odd)).toEqual([30]);
      expect(value(third, 'flussonic_sessions', odd)).toEqual([0]);
      expect(value(third, 'flussonic_sessions', 'index')).toEqual([1]);
      expect(value(third, 'flussonic_sessions_sent_bytes_total', 'index')).toEqual([110]);
      expect(value(third, 'flussonic_sessions_sent_bytes_total', 'archive')).toEqual([70]);
      expectPromtoolClean(third);
    } finally {
      await client.destroy();
      await upstream.close();
    }
  });
});

describe('group keys', () => {
  const cases: readonly (readonly string[])[] = [['tv', 'hls'], ['', ''], ['a'], [''], ['a\u001fb', 'c'], ['a', 'b\u001e'], ['x"y', '\\'], ['a', 'b', 'c']];
  it('give back the values they were made of', () => {
    for (const values of cases) expect(valuesOfKey(groupKey(values))).toEqual(values);
  });
  it('are matched by exactly the values they were made of, without building a key', () => {
    for (const a of cases) for (const b of cases) expect(isKeyOf(groupKey(a), b)).toBe(groupKey(a) === groupKey(b));
    // Values that would join to the same text as a plain key, but make a JSON key.
    expect(isKeyOf(groupKey(['a', 'b', 'c']), ['a\u001fb', 'c'])).toBe(false);
    expect(isKeyOf(groupKey(['a', 'b']), ['a', 'b', ''])).toBe(false);
    expect(isKeyOf(groupKey(['a', '']), ['a'])).toBe(false);
  });
});

describe('a withdrawn group', () => {
  it('leaves nothing behind for the group that comes after it (its slot is reused from zero)', async () => {
    const session = (id: string, name: string, proto: string, bytes: number) => ({ id, name, proto, bytes, opened_at: 1_767_225_600_000 });
    const listings = [[session('a', 'tv', 'hls', 100)], [], [], [session('b', 'radio', 'dash', 5)]];
    let poll = 0;
    const upstream = await startScripted(() => ({ json: { sessions: listings[poll], next: null } }));
    const config = serverConfig(SERVER, upstream.url, { staleAfterMs: 60_000 });
    const client = new FlussonicClient({ config, stats: new SelfMetrics({ version: 'test', defaultMetrics: false }).apiStats(SERVER), retryBackoffMs: 1 });
    try {
      // Polls at 0, 30 s, 120 s (the tv group unseen for 120 s: withdrawn) and 150 s.
      const at = [0, 30_000, 120_000, 150_000];
      const collector = createSessionsCollector({ now: () => 1_767_225_660_000 + at[poll]! });
      const texts: string[] = [];
      for (poll = 0; poll < listings.length; poll++) {
        const out = new SeriesWriter([['server', SERVER]]);
        await collector.collect({ client, config, signal: AbortSignal.timeout(10_000), log: pino({ level: 'silent' }), out });
        texts.push(render(out));
      }
      const tv = { server: SERVER, stream: 'tv', proto: 'hls' };
      expect(samples(texts[1]!, 'flussonic_sessions_closed_total', tv).map((s) => s.value)).toEqual([1]);
      expect(samples(texts[2]!, 'flussonic_sessions', tv)).toEqual([]);
      const radio = { server: SERVER, stream: 'radio', proto: 'dash' };
      const last = texts[3]!;
      expect(samples(last, 'flussonic_sessions', tv)).toEqual([]);
      expect(samples(last, 'flussonic_sessions', radio).map((s) => s.value)).toEqual([1]);
      expect(samples(last, 'flussonic_sessions_opened_total', radio).map((s) => s.value)).toEqual([1]);
      expect(samples(last, 'flussonic_sessions_closed_total', radio).map((s) => s.value)).toEqual([0]);
      expect(samples(last, 'flussonic_sessions_sent_bytes_total', radio).map((s) => s.value)).toEqual([5]);
      expect(collector.groupCount).toBe(1);
    } finally {
      await client.destroy();
      await upstream.close();
    }
  });
});
