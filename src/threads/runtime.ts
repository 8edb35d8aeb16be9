/**
 * The worker side: a Poller for the targets this worker owns, driven by messages from the main
 * thread (src/threads/protocol.ts), each poll's outcome sent back as a PollResult. A good poll's
 * samples stay here, announced by a number; the main thread asks for them (`compress`) when a
 * scrape needs them, at once when the target's previous poll was scraped, and they are rendered
 * family by family and deflated here, the buffers transferred. A poll nobody scrapes before the
 * next one replaces it is never written or compressed. It
 * runs in a worker thread (src/threads/worker.ts) with the built-in collectors, or over a
 * MessageChannel on the thread that made it (src/threads/in-process.ts) with any collector table.
 */
import type { Logger } from 'pino';
import type { CollectorEntry } from '../collect/types.js';
import { prepareSources, RenderMemo, type SampleSource } from '../render/prepare.js';
import { Poller, targetKey, type PollOutcome } from '../poll/poller.js';
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
  /** Good polls not yet asked for, by number: each target's latest only (`latest`). */
  private readonly held = new Map<number, { readonly key: string; readonly sources: readonly SampleSource[] }>();
  /** Each target's families as last rendered, by `kind/name` (RenderMemo). */
  private readonly memos = new Map<string, RenderMemo>();
  /** The number of each target's latest held poll, by `kind/name` (a server and a Catena service may share a name). */
  private readonly latest = new Map<string, number>();
  private lastHeld = 0;

  constructor(
    private readonly port: RuntimePort,
    private readonly deps: RuntimeDeps,
  ) {
    this.budget = new ConnectionBudget(deps.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
    this.poller = new Poller({ sink: (outcome) => this.send(outcome), log: deps.log });
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
          const keys = new Set(message.targets.map((t) => targetKey(t.target.kind, t.target.config.name)));
          for (const [key, number] of this.latest) if (!keys.has(key)) this.forget(key, number);
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
      case 'compress':
        this.compress(message.request, message.held);
        return;
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

  /** Answers `compress`: the held poll rendered and deflated, if it is still its target's latest. */
  private compress(request: number, number: number): void {
    const held = this.held.get(number);
    if (held === undefined) {
      this.port.postMessage({ type: 'compressed', request });
      return;
    }
    this.held.delete(number);
    let memo = this.memos.get(held.key);
    if (memo === undefined) this.memos.set(held.key, (memo = new RenderMemo()));
    const exposition = [...prepareSources(held.sources, memo)].map(([family, piece]) => ({ family, ...piece }));
    this.port.postMessage({ type: 'compressed', request, exposition }, transferList(exposition));
  }

  private forget(key: string, number: number): void {
    this.held.delete(number);
    this.latest.delete(key);
    this.memos.delete(key);
  }

  private send(outcome: PollOutcome): void {
    const { target, status } = outcome;
    const key = targetKey(target.kind, target.name);
    const before = this.latest.get(key);
    let held: number | undefined;
    if (outcome.exposition) {
      if (before !== undefined) this.held.delete(before);
      held = ++this.lastHeld;
      this.held.set(held, { key, sources: outcome.exposition });
      this.latest.set(key, held);
    } else if (!target.keepSeriesOnFailure && before !== undefined) this.forget(key, before);
    const result: PollResult = {
      id: Number(outcome.fingerprint),
      kind: target.kind,
      name: target.name,
      ok: outcome.ok,
      deadlineMissed: outcome.deadlineMissed,
      ...(held !== undefined ? { held } : {}),
      keepOnFailure: target.keepSeriesOnFailure,
      collectors: outcome.collectors,
      api: this.counts.drain(target.name),
      at: status.lastPoll?.at ?? Date.now(),
      durationMs: status.lastPoll?.durationMs ?? 0,
      failures: status.lastPoll?.failures ?? [],
    };
    this.port.postMessage({ type: 'result', result });
  }
}
