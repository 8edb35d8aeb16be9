/**
 * Sessions collector: GET /sessions as a select-limited cursor walk, aggregated into groups by the
 * configured `group_by` labels. No per-session series ever.
 *
 * The collector is stateful: it remembers, per session id, only what its counters need (the last
 * `bytes`, the group, `opened_at`, the protocol and whether it was counted as closed), so memory
 * grows with the sessions the server lists, not with history. From one poll to the next:
 *   - an id seen for the first time is counted in `flussonic_sessions_opened_total` and adds all its
 *     bytes to `flussonic_sessions_sent_bytes_total`;
 *   - a known id adds the growth of its `bytes` (a shrinking value adds 0 and becomes the new base);
 *   - an id that got `closed_at`, or that is no longer listed, is counted in
 *     `flussonic_sessions_closed_total` and its lifetime goes into `flussonic_session_duration_seconds`
 *     (`closed_at`, else the time of the last poll that listed it, minus `opened_at`); a timestamp
 *     outside Unix ms 10^12 to 10^13 is not observed and is counted as an invalid value.
 * A session that opened and closed between two polls is never seen (HELP and docs/cardinality.md say so).
 *
 * A failed poll changes nothing: the walk only writes "pending" fields stamped with the poll's
 * generation (a number of its own for every walk) and collects new ids aside; `commit()` applies
 * them after the walk has completed. Without that, sessions on the pages the failed walk never
 * reached would be counted as closed. The next walk reads every session again.
 *
 * A group whose sessions all closed keeps exporting its counters (and a gauge of 0), so counters
 * never vanish between polls, until no session of it has been listed for `stale_after` (per
 * server, default 10m): then it is withdrawn and freed, so groups of deleted streams do not stay
 * forever. A group with a session listed is never stale.
 */
import { byDefault, core, defineFamilies } from '../families/define.js';
import { SESSION_SECONDS_RANGE, SESSION_UTC_MS_RANGE, type RangedFamily } from '../families/ranges.js';
import { byKeyOf, DurationHistogram, SESSION_DURATION_BUCKETS, GroupIndex, GroupTable, groupKey, isKeyOf, mergeSorted, valuesOfKey } from './sessions-groups.js';
import { SessionIds } from './session-ids.js';
import { FILTER_NONE, fieldOf, filterId, MUTABLE_FIELDS, sessionsSelect } from './sessions-select.js';
import { SessionTable } from './session-table.js';
import type { SeriesWriter } from '../render/series.js';
import { streamFilterPasses } from '../lib/name-pattern.js';
import type { StreamFilter } from '../config/types.js';
import type { JsonObject, WalkOptions } from '../flussonic/api.js';
import type { CollectContext, Collector } from './types.js';

export { SESSION_DURATION_BUCKETS };

const S = ['server'] as const;

/** The families of the session groups (`perUnit`: series per group), the histogram shed first. */
export const SESSION_FAMILIES = defineFamilies(
  'sessions',
  {
    sessions: { name: 'flussonic_sessions', type: 'gauge', labels: S, tier: core(1), groupByLabels: true,
      help: 'Sessions open now, by the configured group_by labels.' },
    opened: { name: 'flussonic_sessions_opened_total', type: 'counter', labels: S, tier: core(1), groupByLabels: true,
      help: 'Session ids seen for the first time. A session that opened and closed between two polls is not seen.' },
    closed: { name: 'flussonic_sessions_closed_total', type: 'counter', labels: S, tier: core(1), groupByLabels: true,
      help: 'Session ids that disappeared or got closed_at. A session that opened and closed between two polls is not seen.' },
    sentBytes: { name: 'flussonic_sessions_sent_bytes_total', type: 'counter', labels: S, tier: core(1), groupByLabels: true,
      help: 'Bytes sent in sessions: the sum of every seen session\'s bytes growth; monotonic while sessions close. Bytes of a session that opened and closed between two polls are not seen.' },
    duration: { name: 'flussonic_session_duration_seconds', type: 'histogram', labels: ['server', 'proto'], tier: byDefault(),
      help: 'Lifetime of closed sessions in seconds (closed_at or last seen, minus opened_at).' },
  },
  ['duration'],
);
const { sessions: SESSIONS, opened: OPENED, closed: CLOSED, sentBytes: SENT_BYTES, duration: DURATION } = SESSION_FAMILIES;
/**
 * What feeds the duration histogram, each checked against its valid range before it is added (the
 * event sink's play_closed has the same ranges): a value outside is not used and is counted in
 * flussonic_exporter_invalid_values_total{family="flussonic_session_duration_seconds"}.
 */
const SESSION_TIME: RangedFamily = { name: DURATION.name, range: SESSION_UTC_MS_RANGE };
const SESSION_LENGTH: RangedFamily = { name: DURATION.name, range: SESSION_SECONDS_RANGE };

export interface SessionsCollectorOptions {
  /** Unix ms "now", for the lifetime of sessions that vanish without `closed_at`. Default Date.now. */
  readonly now?: () => number;
}

export class SessionsCollector implements Collector {
  private readonly now: () => number;
  private configured = false;
  private groupBy: readonly string[] = [];
  private fields: readonly string[] = [];
  /** Whether a grouping field can change during a session, so known sessions must be re-grouped. */
  private regroup = false;
  private filter: StreamFilter = {};
  private filterKey = '';
  /** Filter decision per stream name: regexes run once per stream, not once per session and poll. */
  private readonly admitted = new Map<string, boolean>();
  private walkOptions: WalkOptions = { select: [], key: 'id' };
  /** What is remembered of each session, one record per slot. */
  private readonly table = new SessionTable();
  /** Committed state: the slot of each listed session id (the UUIDs kept in the table's records). */
  private readonly tracked = new SessionIds(this.table);
  private readonly groupTable = new GroupTable();
  /** The slot in `groupTable` of each committed group's key. */
  private readonly groups = new GroupIndex(this.groupTable);
  private readonly histograms = new Map<string, DurationHistogram>();
  /** Group slots sorted by key. */
  private sortedGroups: number[] | undefined;
  /** The writer constant labels the groups' label blocks were made for. */
  private blocksFor: string | undefined;
  private lastPollAtMs = Number.NaN;
  private generation = 0;
  /** Sessions first seen by the walk in progress (their slots), thrown away unless the walk completes. */
  private fresh = new Map<string, number>();
  private freshGroups = new Map<string, number>();
  private readonly scratch: string[] = [];

  constructor(options: SessionsCollectorOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  async collect(ctx: CollectContext): Promise<void> {
    const { sessionsGroupBy, streams } = ctx.config;
    if (!this.configured || !sameLabels(sessionsGroupBy, this.groupBy) || filterId(streams) !== this.filterKey) {
      // Other labels or other streams make other series: the old groups cannot be carried over.
      // (The poller makes a new collector when a server's config changes; this guards the state anyway.)
      if (this.configured) ctx.log.info({ group_by: sessionsGroupBy }, 'sessions group_by or stream filter changed: counters start again');
      this.configure(sessionsGroupBy, streams);
    }
    const pollAtMs = this.now();
    // Every walk has a number of its own, also one after a failed walk: what the failed walk
    // recorded as pending is then not taken for this walk's.
    const generation = ++this.generation;
    // A walk that failed left its new sessions and groups uncommitted: their slots go back.
    this.releaseFresh();
    for await (const page of ctx.client.walk('/sessions', this.walkOptions, ctx.signal)) {
      for (let i = 0; i < page.length; i++) this.see(page[i]!, generation, ctx.out);
    }
    this.commit(generation, pollAtMs, ctx.out);
    this.withdrawStale(pollAtMs - ctx.config.staleAfterMs);
    this.write(ctx.out);
  }

  /** Writes the committed state as samples (also used by tests to compare snapshots). */
  write(out: SeriesWriter): void {
    for (const proto of [...this.histograms.keys()].sort()) {
      const h = this.histograms.get(proto)!;
      out.addHistogram(DURATION, [proto], {
        buckets: SESSION_DURATION_BUCKETS,
        cumulativeCounts: h.cumulative(),
        sum: h.sum,
        count: h.count,
      });
    }
    const g = this.groupTable;
    // Sorted by key so that max_series drops the same groups every poll.
    this.sortedGroups ??= this.groups.slots().sort(byKeyOf(g.key));
    const labels = this.groupBy;
    // Label blocks are escaped and joined once per group, not once per sample and poll: with tens of
    // thousands of groups that string work (and the garbage it leaves) was most of a poll's CPU.
    if (out.constLabels !== this.blocksFor) {
      g.block.fill(undefined);
      this.blocksFor = out.constLabels;
    }
    for (const slot of this.sortedGroups) {
      const block = (g.block[slot] ??= out.labelBlockOf(SESSIONS, valuesOfKey(g.key[slot]!), labels));
      out.addSample(SESSIONS, block, g.open[slot]!);
      out.addSample(OPENED, block, g.opened[slot]!);
      out.addSample(CLOSED, block, g.closed[slot]!);
      out.addSample(SENT_BYTES, block, g.sentBytes[slot]!);
    }
  }

  /** Sessions remembered between polls (open ones and closed ones the server still lists). */
  get trackedSessions(): number {
    return this.tracked.size;
  }

  private configure(groupBy: readonly string[], filter: StreamFilter): void {
    this.configured = true;
    this.groupBy = [...groupBy];
    this.fields = this.groupBy.map(fieldOf);
    this.regroup = this.fields.some((f) => MUTABLE_FIELDS.has(f));
    this.filter = filter;
    this.filterKey = filterId(filter);
    this.admitted.clear();
    // Every id is looked up in `tracked`/`fresh` anyway (see()), which drops an id listed twice:
    // the walk's own set of 100k ids per poll would be the same work again.
    this.walkOptions = { select: sessionsSelect(this.groupBy, filter), key: 'id', dedupe: false };
    this.fresh = new Map();
    this.freshGroups = new Map();
    this.tracked.clear();
    this.table.clear();
    this.groups.clear();
    this.groupTable.clear();
    this.histograms.clear();
    this.sortedGroups = undefined;
    this.lastPollAtMs = Number.NaN;
  }

  /** One listed session of the walk in progress: recorded as pending, nothing committed. */
  private see(item: JsonObject, generation: number, out: SeriesWriter): void {
    const id = item.id;
    if (typeof id !== 'string' || id === '') {
      out.recordProblem(SESSIONS, ['id'], id);
      return;
    }
    const bytes = numberField(item.bytes, 0, out);
    const closedAtMs = numberField(item.closed_at, Number.NaN, out);
    const known = this.tracked.find(id);
    const t = this.table;
    if (known >= 0) {
      if (t.seenIn(known) === generation) return; // listed twice in one walk
      t.list(known, generation, bytes, closedAtMs);
      // Unless a grouping field can change, the pending group stays the one the session was added with.
      if (this.regroup) {
        const group = t.group(known);
        t.setNextGroup(known, this.stillIn(group, item, out) ? group : this.groupOf(item, out));
      }
      // A fact about the session rather than a counter: safe to learn even if this walk fails.
      if (Number.isNaN(t.openedAtMs(known))) t.setOpenedAtMs(known, numberField(item.opened_at, Number.NaN, out));
      return;
    }
    if (this.fresh.has(id)) return;
    if (this.filterKey !== FILTER_NONE && !this.admits(item.name)) return;
    const group = this.groupOf(item, out);
    const proto = labelValue(item.proto, out);
    const openedAtMs = numberField(item.opened_at, Number.NaN, out);
    this.fresh.set(id, t.add(group, proto, openedAtMs, generation, bytes, closedAtMs));
  }

  /**
   * The stream filter (`streams.include` / `exclude`) applies to sessions too: sessions of a
   * stream that is filtered out are neither tracked nor counted. Only new ids get here.
   */
  private admits(name: unknown): boolean {
    const stream = typeof name === 'string' ? name : '';
    let ok = this.admitted.get(stream);
    if (ok === undefined) {
      ok = streamFilterPasses(this.filter, stream);
      // Stream names come and go; a bounded cache keeps it from growing with history.
      if (this.admitted.size >= 100_000) this.admitted.clear();
      this.admitted.set(stream, ok);
    }
    return ok;
  }

  /** Whether the session's grouping fields still have the values of `group` (no key built). */
  private stillIn(group: number, item: JsonObject, out: SeriesWriter): boolean {
    return isKeyOf(this.groupTable.key[group]!, this.valuesOf(item, out));
  }

  /** The slot of the session's group; a new group is fresh until the walk is committed. */
  private groupOf(item: JsonObject, out: SeriesWriter): number {
    const key = groupKey(this.valuesOf(item, out));
    const known = this.groups.find(key);
    let group = known >= 0 ? known : this.freshGroups.get(key);
    if (group === undefined) {
      group = this.groupTable.add(key);
      this.freshGroups.set(key, group);
    }
    return group;
  }

  /** Gives back the slots of sessions and groups a walk added and did not commit. */
  private releaseFresh(): void {
    for (const slot of this.fresh.values()) this.table.release(slot);
    for (const slot of this.freshGroups.values()) this.groupTable.release(slot);
    this.fresh = new Map();
    this.freshGroups = new Map();
  }

  /** The session's grouping label values, in a scratch array reused for every session. */
  private valuesOf(item: JsonObject, out: SeriesWriter): readonly string[] {
    const values = this.scratch;
    values.length = 0;
    for (const field of this.fields) values.push(labelValue(item[field], out));
    return values;
  }

  /** Applies a completed walk: counters, gauges, histograms, and forgets sessions no longer listed. */
  private commit(generation: number, pollAtMs: number, out: SeriesWriter): void {
    const g = this.groupTable;
    if (this.freshGroups.size > 0) {
      for (const group of this.freshGroups.values()) this.groups.add(group);
      // A few new groups per poll among thousands: merge them in rather than sort everything again.
      if (this.sortedGroups) this.sortedGroups = mergeSorted(this.sortedGroups, [...this.freshGroups.values()].sort(byKeyOf(g.key)), g.key);
    }
    g.open.fill(0);

    const t = this.table;
    // The tracked sessions are the slots with an id (new ones get theirs below).
    for (let slot = 0; slot < t.slots; slot++) {
      if (!this.tracked.has(slot)) continue;
      if (t.seenIn(slot) !== generation) {
        // Not listed any more: it closed some time after the last poll that listed it.
        if (!t.closed(slot)) this.close(slot, t.group(slot), this.lastPollAtMs, false, out);
        this.tracked.remove(slot);
        t.release(slot);
        continue;
      }
      const group = t.nextGroup(slot);
      g.seenAtMs[group] = pollAtMs;
      const nextBytes = t.nextBytes(slot);
      const bytes = t.bytes(slot);
      if (nextBytes > bytes) g.sentBytes[group]! += nextBytes - bytes;
      t.commit(slot);
      if (t.closed(slot)) continue;
      const closedAtMs = t.nextClosedAtMs(slot);
      if (Number.isNaN(closedAtMs)) g.open[group]!++;
      else this.close(slot, group, closedAtMs, true, out);
    }

    for (const [id, slot] of this.fresh) {
      const group = t.group(slot);
      g.seenAtMs[group] = pollAtMs;
      g.opened[group]!++;
      g.sentBytes[group]! += t.nextBytes(slot);
      t.commit(slot);
      const closedAtMs = t.nextClosedAtMs(slot);
      if (Number.isNaN(closedAtMs)) g.open[group]!++;
      else this.close(slot, group, closedAtMs, true, out);
      this.tracked.add(id, slot);
    }
    this.fresh = new Map();
    this.freshGroups = new Map();
    this.lastPollAtMs = pollAtMs;
  }

  /**
   * Withdraws the groups no session of which was listed since `oldestMs`. None of them has a
   * tracked session left (a tracked session is one the last poll listed), so nothing refers to them.
   */
  private withdrawStale(oldestMs: number): void {
    const g = this.groupTable;
    const withdrawn = new Set<number>();
    this.groups.forEach((group) => {
      if (g.open[group]! > 0 || !(g.seenAtMs[group]! < oldestMs)) return;
      withdrawn.add(group);
    });
    if (withdrawn.size === 0) return;
    for (const group of withdrawn) this.groups.remove(group);
    if (this.sortedGroups) this.sortedGroups = this.sortedGroups.filter((group) => !withdrawn.has(group));
    for (const group of withdrawn) g.release(group);
  }

  /** Session groups kept (exported) now. */
  get groupCount(): number {
    return this.groups.size;
  }

  /**
   * Counts the session closed and observes its lifetime: `endMs` is its `closed_at` (`upstream`) or
   * the time of the last poll that listed it. A timestamp of the upstream or a lifetime outside its
   * range is counted (SESSION_TIME, SESSION_LENGTH) and not observed; the close still counts.
   */
  private close(slot: number, group: number, endMs: number, upstream: boolean, out: SeriesWriter): void {
    const t = this.table;
    t.setClosed(slot);
    this.groupTable.closed[group]!++;
    // Without opened_at (or a last poll time) there is no lifetime to observe; the close still counts.
    const openedAtMs = t.openedAtMs(slot);
    if (Number.isNaN(openedAtMs) || Number.isNaN(endMs)) return;
    const proto = t.proto(slot);
    const labels = [proto];
    if (!out.checks.accept(SESSION_TIME, openedAtMs, labels)) return;
    if (upstream && !out.checks.accept(SESSION_TIME, endMs, labels)) return;
    const seconds = Math.max(0, (endMs - openedAtMs) / 1000);
    if (!out.checks.accept(SESSION_LENGTH, seconds, labels)) return;
    let h = this.histograms.get(proto);
    if (h === undefined) {
      h = new DurationHistogram();
      this.histograms.set(proto, h);
    }
    h.observe(seconds);
  }
}

/** A grouping field as a label value: strings as they are, booleans "true"/"false", absent "". */
function labelValue(v: unknown, out: SeriesWriter): string {
  if (typeof v === 'string') return v;
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (v === undefined || v === null) return '';
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  out.recordProblem(SESSIONS, ['group_by'], v);
  return '';
}

/** A numeric field (bytes, Unix ms): absent or null gives `absent`; another type is a shape problem. */
function numberField(v: unknown, absent: number, out: SeriesWriter): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (v !== undefined && v !== null) out.recordProblem(SESSIONS, ['field'], v);
  return absent;
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** One per server; grouping and stream filter come from the server's config at each poll. */
export function createSessionsCollector(options?: SessionsCollectorOptions): SessionsCollector {
  return new SessionsCollector(options);
}
