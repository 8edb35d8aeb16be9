/**
 * The poller: one loop per target, each on its own interval (the first poll after a short random
 * delay, the next ones on a phase of the interval hashed from the target's key, so a fleet's polls
 * are spread over the interval), so targets never wait for each other and a slow one cannot delay
 * the rest. Polls of one target are serialised (a timer tick and a pollOnce() never overlap), and
 * every poll has a deadline below the interval that aborts its in-flight requests.
 *
 * How targets plug in. A target is a Flussonic server or a Catena service; the poller knows only
 * this small interface (src/poll/targets.ts builds both kinds):
 *
 *   Target           { kind, name, labelName, maxSeries, collectors, keepSeriesOnFailure, close(), retime?() }
 *   TargetCollector  { name, collect({ signal, log, out }) => Promise<void | NO_DATA> }
 *
 * A poll runs every collector of the target side by side, each into its own SeriesWriter
 * (`[[labelName, name]]`, max series from the config). Only the poller times collectors and logs
 * them. Every poll that ran to its end is handed to the sink as one PollOutcome: each collector's
 * result (for collector_success, collector_duration_seconds, last_success_timestamp_seconds,
 * series_dropped_total) and, if every collector succeeded, the writers holding the target's new
 * samples, rendered only when a scrape asks for them. If any failed:
 *  - a Flussonic server (`keepSeriesOnFailure: false`) has its upstream series withdrawn and
 *    `flussonic_up` 0: nothing stale is exported;
 *  - a Catena service (`keepSeriesOnFailure: true`) keeps its last series, because they are the
 *    exporter's own accumulated counters and stay true; `flussonic_catena_up` is 0.
 * The poller runs in a worker thread (src/threads/runtime.ts); the sink sends the outcome to the
 * main thread, which owns the exposition cache and the self-metrics.
 */
import type { Logger } from 'pino';
import { NO_DATA, type CollectOutcome } from '../collect/types.js';
import { upstreamError, type UpstreamError } from '../lib/errors.js';
import type { SampleSource } from '../render/prepare.js';
import { InvalidValuesError, type InvalidValue } from '../families/ranges.js';
import { describeFailure, overBudgetMessage } from './report.js';
import { firstPollDelayMs, nextPollAtMs, pollDeadlineMs, pollPhaseMs, type PollTiming } from './schedule.js';
import { raceAbort } from './race-abort.js';
import { SeriesWriter, type SampleSizes, type ShapeProblem } from '../render/series.js';

export interface TargetCollectContext {
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Where this collector's samples go; the target's label is already set. */
  readonly out: SeriesWriter;
}

export interface TargetCollector {
  /** `streams`, `sessions`, `server`, `dvrs`, `operations`: the `collector` label. */
  readonly name: string;
  collect(ctx: TargetCollectContext): Promise<CollectOutcome>;
}

export interface Target {
  readonly kind: 'server' | 'catena';
  /** Configured name: the value of the target's label. */
  readonly name: string;
  /** Label carrying the name on upstream series: `server` or `catena`. */
  readonly labelName: 'server' | 'catena';
  /** Series cap of each collector's writer. */
  readonly maxSeries: number;
  /** Label value cap of each collector's writer, in UTF-8 bytes (default 256: src/render/label-cap.ts). */
  readonly maxLabelValueBytes?: number;
  readonly collectors: readonly TargetCollector[];
  /** After a failed poll, keep the last exported series (Catena) instead of withdrawing them. */
  readonly keepSeriesOnFailure: boolean;
  /** Releases what the target holds (connection pools). In-flight requests are aborted first. */
  close(): Promise<void>;
  /** Takes on a new timing (its clients' request timeout and keep-alive); the poller keeps the interval. */
  retime?(timing: PollTiming): void;
}

/** How the exporter describes a target to the poller: built only when new or changed. */
export interface TargetSpec {
  readonly kind: Target['kind'];
  readonly name: string;
  /** Changes whenever the target's configuration other than its timing changes (secrets included; never shown). */
  readonly fingerprint: string;
  /** A running target with the same fingerprint takes on a new timing. */
  readonly timing: PollTiming;
  create(): Target;
}

/** What the landing page shows of a target. */
export interface TargetStatus {
  readonly kind: Target['kind'];
  readonly name: string;
  readonly intervalMs: number;
  /** Undefined until the first poll attempt ended. */
  readonly lastPoll?: {
    readonly ok: boolean;
    /** Unix ms when the poll ended. */
    readonly at: number;
    readonly durationMs: number;
    /** `collector: reason: message` of each failed collector. */
    readonly failures: readonly string[];
  };
}

/** One collector's run in a poll, as the sink reports it. */
export interface CollectorRun {
  readonly name: string;
  readonly ok: boolean;
  readonly durationSeconds: number;
  /** Series over the target's max_series, dropped in this run. */
  readonly dropped: number;
  /** Upstream values out of their family's range (not exported), by family (src/families/ranges.ts). */
  readonly invalid: Readonly<Record<string, number>>;
  /** Series of whole families shed by max_series in this run, by family (docs/cardinality.md). */
  readonly shed: Readonly<Record<string, number>>;
  /** Label values cut to max_label_value_bytes in this run, by family (src/render/label-cap.ts). */
  readonly truncated?: Readonly<Record<string, number>>;
  /** The streams this run exported (label-capped), when its server's events are received (src/events). */
  readonly streams?: readonly string[];
}

/** One poll that ran to its end (a poll cut short by stop or removal reports nothing). */
export interface PollOutcome {
  readonly target: Target;
  /** The fingerprint of the spec the target was made from. */
  readonly fingerprint: string;
  readonly ok: boolean;
  /** The poll reached its deadline before every collector finished (flussonic_exporter_poll_deadline_missed_total). */
  readonly deadlineMissed: boolean;
  /**
   * A good poll's samples, one source per collector in the table's order, kept as counted: the
   * sink renders and deflates them (prepareSources()) when, and if, a scrape needs them.
   */
  readonly exposition?: readonly SampleSource[];
  readonly collectors: readonly CollectorRun[];
  readonly status: TargetStatus;
}

export interface PollerDeps {
  /** Receives every poll's outcome. */
  readonly sink: (outcome: PollOutcome) => void;
  readonly log: Logger;
}

const SHAPE_PROBLEMS_LOGGED = 3;

export class Poller {
  private readonly runners = new Map<string, TargetRunner>();
  private started = false;
  private stopped = false;

  constructor(private readonly deps: PollerDeps) {}

  /**
   * Applies the wanted set of targets: new ones are created (and started if the poller runs),
   * removed ones stopped with their series and self-metrics withdrawn, changed ones (other
   * fingerprint) replaced; unchanged ones keep running untouched, on the spec's timing.
   */
  async apply(specs: readonly TargetSpec[]): Promise<void> {
    if (this.stopped) return;
    const wanted = new Map(specs.map((s) => [targetKey(s.kind, s.name), s]));
    const removals: Promise<void>[] = [];
    for (const [key, runner] of this.runners) {
      const spec = wanted.get(key);
      if (spec && spec.fingerprint === runner.fingerprint) {
        runner.retime(spec.timing);
        continue;
      }
      this.runners.delete(key);
      removals.push(this.retire(runner, spec ? 'target configuration changed' : 'target removed from the configuration'));
    }
    await Promise.all(removals);
    for (const [key, spec] of wanted) {
      if (this.runners.has(key)) continue;
      const runner = new TargetRunner(spec.fingerprint, spec.timing, spec.create(), this.deps);
      this.runners.set(key, runner);
      if (this.started) runner.start();
    }
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    for (const runner of this.runners.values()) runner.start();
  }

  /** Runs one poll of every target (or of those with this name) now, after any poll in flight. */
  async pollOnce(name?: string): Promise<void> {
    const runners = [...this.runners.values()].filter((r) => name === undefined || r.target.name === name);
    if (name !== undefined && runners.length === 0) throw new Error(`no target named ${JSON.stringify(name)}`);
    await Promise.all(runners.map((r) => r.pollNow()));
  }

  /** Stops every loop and aborts polls in flight; resolves when all targets are closed. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const all = [...this.runners.values()];
    this.runners.clear();
    await Promise.all(all.map((r) => r.stop('exporter stopping')));
  }

  /** Stops a removed or replaced target; its series and self-metrics are withdrawn by the sink's owner. */
  private async retire(runner: TargetRunner, why: string): Promise<void> {
    await runner.stop(why);
    this.deps.log.info({ [runner.target.labelName]: runner.target.name }, why);
  }
}

/** Cache key of a target: kinds have separate name spaces. */
export function targetKey(kind: Target['kind'], name: string): string {
  return `${kind}/${name}`;
}

interface CollectorResult {
  readonly collector: TargetCollector;
  /** What the run counted. */
  readonly out: SeriesWriter;
  readonly durationSeconds: number;
  readonly outcome?: CollectOutcome;
  readonly error?: unknown;
}

class TargetRunner {
  status: TargetStatus;
  private timer: NodeJS.Timeout | undefined;
  /** The poll in flight (or the last one): polls chain on it, so they never overlap. */
  private chain: Promise<void> = Promise.resolve();
  private inFlight: AbortController | undefined;
  private stopped = false;
  private readonly log: Logger;
  /** When the target is polled and its requests' timeout, until a reload changes them (retime()). */
  private timing: PollTiming;
  /** Where in the interval this target is polled after its first poll (pollPhaseMs). */
  private phaseMs: number;
  /** When the last poll from the loop started (Unix ms); undefined before the first. */
  private lastStartedAt: number | undefined;
  /** Samples per family of each collector's last run here: the next run's writer is made for them. */
  private readonly sampleSizes = new Map<string, SampleSizes>();
  /** Each collector's child logger, made once: a pino child costs a copy of its bindings through redaction. */
  private readonly collectorLogs = new Map<string, Logger>();

  constructor(
    readonly fingerprint: string,
    timing: PollTiming,
    readonly target: Target,
    private readonly deps: PollerDeps,
  ) {
    this.log = deps.log.child({ [target.labelName]: target.name });
    this.timing = timing;
    this.phaseMs = pollPhaseMs(targetKey(target.kind, target.name), timing.intervalMs);
    this.status = { kind: target.kind, name: target.name, intervalMs: timing.intervalMs };
  }

  private get intervalMs(): number {
    return this.timing.intervalMs;
  }

  /**
   * Takes on a new timing. The target keeps its series, counters and state; its requests get the
   * new timeout. On a new interval, the next poll the loop waits for moves onto the interval's
   * phase (at once if that is already past); a poll in flight schedules its successor itself.
   */
  retime(timing: PollTiming): void {
    const before = this.timing;
    if (this.stopped || (timing.intervalMs === before.intervalMs && timing.timeoutMs === before.timeoutMs)) return;
    this.timing = timing;
    this.target.retime?.(timing);
    if (timing.intervalMs === before.intervalMs) return;
    const { intervalMs } = timing;
    this.phaseMs = pollPhaseMs(targetKey(this.target.kind, this.target.name), intervalMs);
    this.status = { ...this.status, intervalMs };
    this.log.info({ fromSeconds: before.intervalMs / 1000, toSeconds: intervalMs / 1000 }, 'poll interval changed');
    if (this.timer && this.lastStartedAt !== undefined) {
      clearTimeout(this.timer);
      this.schedule(Math.max(0, nextPollAtMs(this.lastStartedAt, intervalMs, this.phaseMs) - Date.now()));
    }
  }

  start(): void {
    if (this.stopped || this.timer) return;
    this.schedule(firstPollDelayMs(this.intervalMs, Math.random));
  }

  pollNow(): Promise<void> {
    if (this.stopped) return this.chain;
    const run = this.chain.then(() => this.poll());
    // The chain itself never rejects, so one broken poll cannot stop the ones after it.
    this.chain = run.catch((err: unknown) => this.log.error({ err }, 'poll failed unexpectedly'));
    return run;
  }

  async stop(why: string): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight?.abort(new Error(why));
    await this.chain;
    await this.target.close().catch((err: unknown) => this.log.warn({ err }, 'closing the target failed'));
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const startedAt = Date.now();
      this.lastStartedAt = startedAt;
      void this.pollNow()
        .catch(() => undefined)
        .then(() => {
          // Fixed rate, on the target's phase of the interval.
          if (!this.stopped) this.schedule(Math.max(0, nextPollAtMs(startedAt, this.intervalMs, this.phaseMs) - Date.now()));
        });
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    const { target } = this;
    const deadlineMs = pollDeadlineMs(this.intervalMs);
    const controller = new AbortController();
    this.inFlight = controller;
    let deadlineMissed = false;
    const deadline = setTimeout(() => {
      deadlineMissed = true;
      controller.abort(new Error(`poll deadline of ${deadlineMs} ms reached`));
    }, deadlineMs);
    const started = performance.now();
    let results: CollectorResult[];
    try {
      results = await Promise.all(target.collectors.map((c) => this.runCollector(c, controller.signal)));
    } finally {
      clearTimeout(deadline);
      this.inFlight = undefined;
    }
    // A poll cut short by stop() or removal reports nothing: the target is going away.
    if (this.stopped) return;
    this.report(results, performance.now() - started, deadlineMissed);
  }

  /**
   * Runs one collector. Its promise is raced against the poll's signal, so a collector that does
   * not honour the signal still cannot hold the poll past the deadline.
   */
  private async runCollector(collector: TargetCollector, signal: AbortSignal): Promise<CollectorResult> {
    const out = new SeriesWriter([[this.target.labelName, this.target.name]], this.target.maxSeries, this.sampleSizes.get(collector.name), this.target.maxLabelValueBytes);
    const started = performance.now();
    let log = this.collectorLogs.get(collector.name);
    if (log === undefined) this.collectorLogs.set(collector.name, (log = this.log.child({ collector: collector.name })));
    try {
      const outcome = await raceAbort(collector.collect({ signal, log, out }), signal, () => this.deadlineError(collector.name, signal));
      const durationSeconds = (performance.now() - started) / 1000;
      this.sampleSizes.set(collector.name, out.sampleSizes());
      out.settle();
      return { collector, out, durationSeconds, outcome };
    } catch (error) {
      return { collector, out, durationSeconds: (performance.now() - started) / 1000, error };
    }
  }

  private deadlineError(collector: string, signal: AbortSignal): UpstreamError {
    const why = signal.reason instanceof Error ? signal.reason.message : 'aborted';
    return upstreamError('collector_deadline', { target: this.target.name, endpoint: collector }, { why });
  }

  private report(results: readonly CollectorResult[], durationMs: number, deadlineMissed: boolean): void {
    const { target, deps } = this;
    const failures: string[] = [];
    const dropped: Record<string, number> = {};
    const shed: Record<string, Record<string, number>> = {};
    const problems: (ShapeProblem & { collector: string })[] = [];
    let problemCount = 0;
    const invalid: (InvalidValue & { collector: string })[] = [];
    let invalidCount = 0;
    let series = 0;
    // A run's error: its own, or mostly invalid values (ranges.ts); the sink reports the same.
    const errors = new Map<CollectorResult, unknown>();

    for (const r of results) {
      const name = r.collector.name;
      // Values out of their family's range were not exported (src/families/ranges.ts); mostly such values fail the run.
      const checks = r.out.checks;
      if (checks.invalid > 0) {
        invalidCount += checks.invalid;
        for (const v of checks.examples) if (invalid.length < SHAPE_PROBLEMS_LOGGED) invalid.push({ collector: name, ...v });
      }
      const error = r.error ?? (checks.mostlyInvalid ? new InvalidValuesError(checks) : undefined);
      const ok = error === undefined;
      errors.set(r, error);
      if (!ok) {
        const { reason, message } = describeFailure(error);
        failures.push(`${name}: ${reason}: ${message}`);
        const fields = { collector: name, reason, durationMs: Math.round(r.durationSeconds * 1000) };
        if (reason === 'internal') this.log.warn({ ...fields, err: r.error }, `collector failed: ${message}`);
        else this.log.warn(fields, `collector failed: ${message}`);
        continue;
      }
      if (r.outcome === NO_DATA) this.log.debug({ collector: name }, 'collector found nothing of its kind on this target');
      series += r.out.series;
      if (r.out.dropped > 0) dropped[name] = r.out.dropped;
      for (const [family, count] of r.out.shed) (shed[name] ??= {})[family] = count;
      problemCount += r.out.problemCount;
      for (const p of r.out.problems) if (problems.length < SHAPE_PROBLEMS_LOGGED) problems.push({ collector: name, ...p });
    }

    if (Object.keys(dropped).length > 0 || Object.keys(shed).length > 0) {
      this.log.warn({ dropped, shed, maxSeries: target.maxSeries }, overBudgetMessage(target, shed, dropped));
    }
    if (invalidCount > 0) {
      this.log.warn({ count: invalidCount, first: invalid }, 'upstream values outside their valid range were not exported');
    }
    if (problemCount > 0) {
      this.log.warn({ count: problemCount, first: problems }, 'upstream fields with an unexpected type were skipped');
    }

    const ok = failures.length === 0;
    this.status = { ...this.status, lastPoll: { ok, at: Date.now(), durationMs, failures } };
    deps.sink({
      target,
      fingerprint: this.fingerprint,
      ok,
      deadlineMissed,
      ...(ok ? { exposition: results.map((r) => r.out) } : {}),
      collectors: results.map((r) => ({
        name: r.collector.name,
        ok: errors.get(r) === undefined,
        durationSeconds: r.durationSeconds,
        dropped: errors.get(r) === undefined ? r.out.dropped : 0,
        invalid: Object.fromEntries(r.out.checks.byFamily),
        shed: errors.get(r) === undefined ? Object.fromEntries(r.out.shed) : {},
        ...(r.out.truncated.size > 0 ? { truncated: Object.fromEntries(r.out.truncated) } : {}),
        ...(r.collector.name === 'streams' && errors.get(r) === undefined ? { streams: r.out.units } : {}),
      })),
      status: this.status,
    });
    this.log.debug(
      { ok, durationMs: Math.round(durationMs), series, collectors: Object.fromEntries(results.map((r) => [r.collector.name, r.error === undefined ? (r.outcome === NO_DATA ? 'no_data' : 'ok') : 'failed'])) },
      'poll finished',
    );
  }
}
