/**
 * The main thread's side of the worker threads. apply(targets) is the seam where the set of
 * targets arrives (from the config today; from discovery and sharding later): each target is owned
 * by one worker, chosen by a stable hash of its key (`kind/name`) spread over the workers, so
 * a target stays on its worker across reloads (a Catena service keeps its ledger) and the split
 * needs no coordination. The pool keeps what must outlive a worker: the exposition cache (per
 * target), the self-metrics' running totals, and each target's status.
 *
 * A worker that crashes (uncaught error, exit) is restarted after a backoff (0.5 s doubling to
 * 30 s; reset once a worker has run a minute). Meanwhile its targets report `flussonic_up 0` /
 * `flussonic_catena_up 0` with their upstream series withdrawn; the crash is logged once, with the
 * reason. Request counters go on from their totals, which live here.
 *
 * Worker count: `size` slots (the `workers` setting, by default the CPUs the process may use:
 * src/lib/cpu-limit.ts), but a slot's thread runs only while the slot owns a target. It is started
 * with its first target and retired (stopped, then ended) when discovery or a reload takes its
 * last one, so no more threads run than there are owned targets: min(size, owned targets) at most,
 * fewer where the hash puts several targets on one slot. A target keeps its slot as the set
 * changes (the hash is over `size`, which changes only at a restart).
 */
import type { Logger } from 'pino';
import type { ExporterConfig } from '../config/types.js';
import type { ExpositionCache } from '../serve/exposition.js';
import type { SelfMetrics } from '../serve/self.js';
import { unitOf } from '../lib/hash.js';
import { targetKey, type TargetStatus } from '../poll/poller.js';
import { identityOf } from './target-descriptions.js';
import type { ChannelFactory, WorkerChannel } from './channels.js';
import type { AssignedTarget, FromWorker, PollResult, TargetDescription } from './protocol.js';
import type { PreparedTarget } from '../render/prepare.js';

export interface PoolDeps {
  /** Number of workers (targets are spread over them by hash). */
  readonly size: number;
  readonly channels: ChannelFactory;
  readonly cache: ExpositionCache;
  readonly self: SelfMetrics;
  readonly log: Logger;
  /** Writes a log line a worker finished (to the main logger's destination). */
  readonly writeLog: (line: string) => void;
  /** Hears of the streams each good poll of a server exported (the event sink's join, src/events). */
  readonly streamsExported?: (server: string, streams: readonly string[]) => void;
}

interface Assigned {
  readonly key: string;
  readonly id: number;
  /** identityOf(description): what the target is, less its timing (poll interval, timeout). */
  readonly identity: string;
  /** The latest description (a reload may change its timing only). */
  description: TargetDescription;
  readonly slot: Slot;
  status: TargetStatus;
}

const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before crashing is restarted after the shortest backoff again. */
const STABLE_MS = 60_000;
/** A retired worker that has not answered `stop` by then is ended anyway. */
const RETIRE_GRACE_MS = 5_000;

class Slot {
  channel: WorkerChannel | undefined;
  /** Resolves when a crashed worker is running again (or the pool stopped). */
  back: Promise<void> | undefined;
  startedAt = 0;
  crashes = 0;
  restartTimer: NodeJS.Timeout | undefined;
  /** Ends the wait for a restart early (stop). */
  wake: (() => void) | undefined;
  readonly polls = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  /** `compress` requests awaiting their answer. */
  readonly compressions = new Map<number, (prepared: PreparedTarget | undefined) => void>();
  stopped: (() => void) | undefined;
  constructor(readonly index: number) {}

  /** Ends what waits on this slot's worker: polls resolve, held expositions are gone. */
  settle(): void {
    for (const poll of this.polls.values()) poll.resolve();
    this.polls.clear();
    for (const answer of this.compressions.values()) answer(undefined);
    this.compressions.clear();
  }
}

/** The worker of a target: a stable hash of its key (src/lib/hash.ts), the same in every process and version. */
export function ownerOf(key: string, size: number): number {
  return Math.floor(unitOf(key) * size);
}

export class WorkerPool {
  private readonly slots: Slot[];
  private readonly assigned = new Map<string, Assigned>();
  private nextId = 1;
  private nextPoll = 1;
  private nextCompression = 1;
  private started = false;
  private stopping = false;
  /** Workers whose slot lost its last target, winding down: each resolves once the thread ended. */
  private readonly retiring = new Map<WorkerChannel, { stopped: () => void; done: Promise<void> }>();

  constructor(private readonly deps: PoolDeps) {
    this.slots = Array.from({ length: Math.max(1, deps.size) }, (_, i) => new Slot(i));
  }

  /**
   * The set of targets to poll now. New ones are created, removed ones stopped with their series
   * and self-metrics withdrawn, changed ones replaced; unchanged ones keep running untouched, and
   * so do those whose timing alone changed (poll interval, timeout): their worker retimes them.
   */
  apply(targets: readonly TargetDescription[]): void {
    if (this.stopping) return;
    const { cache, self } = this.deps;
    const wanted = new Map(targets.map((t) => [targetKey(t.kind, t.config.name), t]));
    for (const [key, a] of this.assigned) {
      const next = wanted.get(key);
      if (next && identityOf(next) === a.identity) {
        a.description = next;
        a.status = { ...a.status, intervalMs: next.config.pollIntervalMs };
        continue;
      }
      this.assigned.delete(key);
      cache.withdraw(key);
      self.removeTarget(a.description.kind, a.description.config.name);
    }
    for (const [key, description] of wanted) {
      if (this.assigned.has(key)) continue;
      const slot = this.slots[ownerOf(key, this.slots.length)]!;
      const { kind, config } = description;
      const status: TargetStatus = { kind, name: config.name, intervalMs: config.pollIntervalMs };
      this.assigned.set(key, { key, id: this.nextId++, identity: identityOf(description), description, slot, status });
    }
    for (const slot of this.slots) this.sendTargets(slot);
  }

  start(): void {
    if (this.started || this.stopping) return;
    this.started = true;
    for (const slot of this.slots) slot.channel?.post({ type: 'start' });
  }

  /** Runs one poll of every target (or of those with this name) now and awaits it, and its exposition. */
  async pollOnce(name?: string): Promise<void> {
    if (this.stopping) return;
    // Without a name every running worker is asked, also one left without targets: its answer
    // comes after it applied the last set (removed targets stopped and closed).
    const owners = new Set<Slot>(name === undefined ? this.slots.filter((s) => s.channel || s.back) : []);
    for (const a of this.assigned.values()) if (name === undefined || a.description.config.name === name) owners.add(a.slot);
    if (name !== undefined && owners.size === 0) throw new Error(`no target named ${JSON.stringify(name)}`);
    await Promise.all([...[...owners].map((slot) => this.pollSlot(slot, name)), ...(name === undefined ? [...this.retiring.values()].map((r) => r.done) : [])]);
    // What was polled is then the exposition: asked for from the workers as a scrape would.
    await this.deps.cache.settled();
  }

  /** Worker threads running now (not those restarting after a crash or winding down). */
  running(): number {
    return this.slots.filter((s) => s.channel).length;
  }

  statuses(): TargetStatus[] {
    return [...this.assigned.values()].map((a) => a.status);
  }

  /** True when every target finished its first poll attempt (successful or not). */
  ready(): boolean {
    for (const a of this.assigned.values()) if (!a.status.lastPoll) return false;
    return true;
  }

  /**
   * Hands buffers no response uses any more to a running worker, whose frequent collections free
   * them (this thread collects rarely). With no worker running they are left to this thread's GC.
   */
  free(buffers: ArrayBuffer[]): void {
    const slot = this.slots.find((s) => s.channel);
    slot?.channel!.post({ type: 'free', buffers }, buffers);
  }

  setLogLevel(level: ExporterConfig['logLevel']): void {
    for (const slot of this.slots) slot.channel?.post({ type: 'log-level', level });
  }

  /**
   * Stops every worker: polls in flight are aborted and pools closed by the workers themselves,
   * for up to `graceMs`; then the threads are ended. Resolves false when the grace ran out.
   */
  async stop(graceMs: number): Promise<boolean> {
    this.stopping = true;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
    const stops = this.slots.map((slot) => {
      clearTimeout(slot.restartTimer);
      slot.wake?.();
      const channel = slot.channel;
      if (!channel) return Promise.resolve();
      return new Promise<void>((resolve) => {
        slot.stopped = resolve;
        channel.post({ type: 'stop' });
      });
    });
    for (const r of this.retiring.values()) stops.push(r.done);
    const inTime = await Promise.race([Promise.all(stops).then(() => true), graceOver]);
    clearTimeout(timer);
    await Promise.all(
      this.slots.map(async (slot) => {
        const channel = slot.channel;
        slot.channel = undefined;
        slot.settle();
        await channel?.terminate();
      }),
    );
    return inTime;
  }

  private targetsOf(slot: Slot): AssignedTarget[] {
    return [...this.assigned.values()].filter((a) => a.slot === slot).map((a) => ({ id: a.id, target: a.description }));
  }

  private sendTargets(slot: Slot): void {
    const targets = this.targetsOf(slot);
    if (!slot.channel) {
      // A crashed worker gets the current set when it is back; an unused one is not started.
      if (targets.length === 0 || slot.back) return;
      this.spawn(slot);
      return;
    }
    if (targets.length === 0) {
      this.retire(slot, slot.channel);
      return;
    }
    slot.channel.post({ type: 'apply', targets });
  }

  /**
   * Ends the worker of a slot left without targets: its loops stop and its pools close (`stop`),
   * then the thread is ended, after its answer or RETIRE_GRACE_MS. The slot is free at once: a
   * target arriving meanwhile starts a new worker.
   */
  private retire(slot: Slot, channel: WorkerChannel): void {
    slot.channel = undefined; // its exit is no crash from now on
    slot.settle();
    let stopped = (): void => undefined;
    const answered = new Promise<void>((resolve) => (stopped = resolve));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, RETIRE_GRACE_MS);
      timer.unref();
    });
    const done = Promise.race([answered, grace]).then(async () => {
      clearTimeout(timer);
      await channel.terminate();
      this.retiring.delete(channel);
    });
    this.retiring.set(channel, { stopped, done });
    channel.post({ type: 'stop' });
    this.deps.log.debug({ worker: slot.index }, 'worker thread retired: no targets left');
  }

  private spawn(slot: Slot): void {
    const channel: WorkerChannel = this.deps.channels(slot.index, {
      message: (m) => (slot.channel === channel || !this.retiring.has(channel) ? this.receive(slot, m) : this.fromRetiring(channel, m)),
      exit: (reason) => this.crashed(slot, channel, reason),
    });
    slot.channel = channel;
    slot.startedAt = Date.now();
    channel.post({ type: 'apply', targets: this.targetsOf(slot) });
    if (this.started) channel.post({ type: 'start' });
  }

  private pollSlot(slot: Slot, name: string | undefined): Promise<void> {
    return (async () => {
      if (!slot.channel && slot.back) await slot.back;
      const channel = slot.channel;
      if (!channel || this.stopping) return;
      const id = this.nextPoll++;
      await new Promise<void>((resolve, reject) => {
        slot.polls.set(id, { resolve, reject });
        channel.post({ type: 'poll', id, ...(name !== undefined ? { name } : {}) });
      });
    })();
  }

  /** A retiring worker's last words: results of removed targets are ignored by record(). */
  private fromRetiring(channel: WorkerChannel, message: FromWorker): void {
    if (message.type === 'stopped') this.retiring.get(channel)?.stopped();
    else if (message.type === 'result') this.record(message.result);
    else if (message.type === 'log') this.deps.writeLog(message.line);
  }

  private receive(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case 'result':
        this.record(message.result);
        return;
      case 'polled': {
        const poll = slot.polls.get(message.id);
        slot.polls.delete(message.id);
        if (message.error === undefined) poll?.resolve();
        else poll?.reject(new Error(message.error));
        return;
      }
      case 'compressed': {
        const answer = slot.compressions.get(message.request);
        slot.compressions.delete(message.request);
        answer?.(message.exposition && new Map(message.exposition.map((p) => [p.family, p])));
        return;
      }
      case 'log':
        this.deps.writeLog(message.line);
        return;
      case 'stopped':
        slot.stopped?.();
        return;
    }
  }

  /** Asks a slot's worker for a poll it holds (PollResult.held), rendered and deflated. */
  private compress(slot: Slot, held: number): Promise<PreparedTarget | undefined> {
    const channel = slot.channel;
    if (!channel) return Promise.resolve(undefined);
    const request = this.nextCompression++;
    return new Promise((resolve) => {
      slot.compressions.set(request, resolve);
      channel.post({ type: 'compress', request, held });
    });
  }

  /** Applies one poll's result: self-metrics, the exposition swap or withdrawal, the status. */
  private record(r: PollResult): void {
    const { cache, self } = this.deps;
    const key = targetKey(r.kind, r.name);
    const a = this.assigned.get(key);
    if (!a) return; // removed meanwhile: its series and self-metrics are gone already
    self.addApiCounts(r.name, r.api);
    if (a.id !== r.id) return; // the poll of a replaced configuration
    self.pollEnded(r.kind, r.name, r.deadlineMissed);
    for (const c of r.collectors) {
      self.collectorRun(r.name, c.name, c.ok, c.durationSeconds, r.at / 1000);
      if (c.ok && c.dropped > 0) self.seriesDropped(r.name, c.name, c.dropped);
      const invalid = Object.entries(c.invalid);
      if (invalid.length > 0) self.invalidValues(r.name, new Map(invalid));
      for (const [family, count] of Object.entries(c.shed)) self.seriesShed(r.name, c.name, family, count);
      if (c.truncated) self.labelValuesTruncated(r.name, c.truncated);
      if (c.streams && r.kind === 'server') this.deps.streamsExported?.(r.name, c.streams);
    }
    const held = r.held;
    if (r.ok && held !== undefined) cache.swapHeld(key, () => this.compress(a.slot, held));
    else if (!r.ok && !r.keepOnFailure) cache.withdraw(key);
    this.setUp(a, r.ok);
    a.status = { ...a.status, lastPoll: { ok: r.ok, at: r.at, durationMs: r.durationMs, failures: r.failures } };
  }

  private setUp(a: Assigned, up: boolean): void {
    if (a.description.kind === 'server') this.deps.self.setServerUp(a.description.config.name, up);
    else this.deps.self.setCatenaUp(a.description.config.name, up);
  }

  private crashed(slot: Slot, channel: WorkerChannel, reason: string): void {
    if (slot.channel !== channel || this.stopping) return;
    slot.channel = undefined;
    const targets = [...this.assigned.values()].filter((a) => a.slot === slot);
    const now = Date.now();
    if (now - slot.startedAt >= STABLE_MS) slot.crashes = 0;
    const delayMs = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** slot.crashes);
    slot.crashes++;
    this.deps.log.error({ worker: slot.index, reason, targets: targets.length, restartInMs: delayMs }, `worker thread crashed: ${reason}`);
    for (const a of targets) {
      this.deps.cache.withdraw(a.key);
      this.setUp(a, false);
      a.status = { ...a.status, lastPoll: { ok: false, at: now, durationMs: 0, failures: [`worker thread crashed: ${reason}`] } };
    }
    // Polls awaited from the crashed worker end now; their targets are down.
    slot.settle();
    slot.back = new Promise<void>((resolve) => {
      slot.wake = resolve;
      slot.restartTimer = setTimeout(() => {
        slot.back = undefined;
        slot.wake = undefined;
        if (!this.stopping) {
          this.spawn(slot);
          this.deps.self.workerRestarted();
          this.deps.log.info({ worker: slot.index, targets: this.targetsOf(slot).length }, 'worker thread restarted');
        }
        resolve();
      }, delayMs);
      slot.restartTimer.unref();
    });
  }
}
