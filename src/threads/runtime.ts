/**
 * The worker side: a Poller for the targets this worker owns, driven by messages from the main
 * thread (src/threads/protocol.ts), each poll's outcome sent back as a PollResult with its
 * exposition prepared here (rendered family by family and deflated) and its buffers transferred. It
 * runs in a worker thread (src/threads/worker.ts) with the built-in collectors, or over a
 * MessageChannel on the thread that made it (src/threads/in-process.ts) with any collector table.
 */
import type { Logger } from 'pino';
import type { CollectorEntry } from '../collect/types.js';
import { prepareSources } from '../render/prepare.js';
import { Poller, type PollOutcome } from '../poll/poller.js';
import { targetSpec, type CatenaCollectorFactory } from '../poll/targets.js';
import { ApiCountsByTarget } from './api-counts.js';
import { DEFAULT_MAX_CONNECTIONS } from '../config/bounds.js';
import { ConnectionBudget } from '../upstream/connections.js';
import { transferList, type FromWorker, type PollResult, type ToWorker } from './protocol.js';

/** The side of a message port a runtime talks through (a worker's parentPort, or a MessagePort). */
export interface RuntimePort {
  postMessage(message: FromWorker, transfer?: readonly ArrayBuffer[]): void;
  on(event: 'message', listener: (message: ToWorker) => void): unknown;
}

export interface RuntimeDeps {
  readonly log: Logger;
  readonly collectorTable: readonly CollectorEntry[];
  readonly catenaCollector: CatenaCollectorFactory;
  readonly userAgent: string;
  /** This worker's share of max_connections (default: all of DEFAULT_MAX_CONNECTIONS). */
  readonly maxConnections?: number;
}

export class WorkerRuntime {
  private readonly counts = new ApiCountsByTarget();
  /** Every server client of this worker draws its sockets from it. */
  readonly budget: ConnectionBudget;
  private readonly poller: Poller;
  /** Applications and stop, in the order they came; polls wait for the applications before them. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly port: RuntimePort,
    private readonly deps: RuntimeDeps,
  ) {
    this.budget = new ConnectionBudget(deps.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
    this.poller = new Poller({ sink: (outcome) => this.send(outcome), prepare: (samples) => prepareSources([samples]), log: deps.log });
    port.on('message', (message) => this.receive(message));
  }

  private receive(message: ToWorker): void {
    switch (message.type) {
      case 'apply': {
        const targetDeps = { ...this.deps, stats: (name: string) => this.counts.stats(name), budget: this.budget };
        const specs = message.targets.map((t) => targetSpec(t, targetDeps));
        const names = new Set(message.targets.map((t) => t.target.config.name));
        this.enqueue(async () => {
          await this.poller.apply(specs);
          this.counts.retain(names);
        });
        return;
      }
      case 'start':
        this.enqueue(async () => this.poller.start());
        return;
      case 'poll': {
        // Not queued: an application or stop that arrives meanwhile must not wait for this poll.
        const { id, name } = message;
        void this.queue
          .then(() => this.poller.pollOnce(name))
          .then(
            () => this.port.postMessage({ type: 'polled', id }),
            (err: unknown) => this.port.postMessage({ type: 'polled', id, error: err instanceof Error ? err.message : String(err) }),
          );
        return;
      }
      case 'log-level':
        this.deps.log.level = message.level;
        return;
      case 'free':
        return; // dropped: they go with this thread's next minor collection
      case 'stop':
        this.enqueue(async () => {
          await this.poller.stop();
          this.port.postMessage({ type: 'stopped' });
        });
        return;
    }
  }

  private enqueue(step: () => Promise<void>): void {
    this.queue = this.queue.then(step).catch((err: unknown) => this.deps.log.error({ err }, 'worker step failed'));
  }

  private send(outcome: PollOutcome): void {
    const { target, status } = outcome;
    const exposition = outcome.exposition ? [...outcome.exposition].map(([family, piece]) => ({ family, ...piece })) : undefined;
    const result: PollResult = {
      id: Number(outcome.fingerprint),
      kind: target.kind,
      name: target.name,
      ok: outcome.ok,
      deadlineMissed: outcome.deadlineMissed,
      ...(exposition ? { exposition } : {}),
      keepOnFailure: target.keepSeriesOnFailure,
      collectors: outcome.collectors,
      api: this.counts.drain(target.name),
      at: status.lastPoll?.at ?? Date.now(),
      durationMs: status.lastPoll?.durationMs ?? 0,
      failures: status.lastPoll?.failures ?? [],
    };
    this.port.postMessage({ type: 'result', result }, transferList(result));
  }
}
