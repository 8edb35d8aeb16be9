/**
 * The pool's channels to worker runtimes on this thread, each over a MessageChannel, with the same
 * protocol as a worker thread: for `workers: 0` (one small server polled on the serving thread,
 * which the command then loads this module for), for collector tables that are functions, which
 * cannot cross threads (the poller's and the HTTP face's tests with scripted collectors), and for
 * measuring what the built-in collectors keep in this heap (bench/memory.ts). It brings the
 * collectors and the HTTP client, so the command loads it only with `workers: 0`.
 */
import { MessageChannel } from 'node:worker_threads';
import { COLLECTORS } from '../collect/index.js';
import type { CollectorEntry } from '../collect/types.js';
import { builtInCatenaCollectors, type CatenaCollectorFactory } from '../poll/targets.js';
import type { ChannelFactory } from './channels.js';
import type { FromWorker } from './protocol.js';
import { WorkerRuntime, type RuntimeDeps, type RuntimePort } from './runtime.js';

export interface InProcessDeps extends Omit<RuntimeDeps, 'collectorTable' | 'catenaCollector'> {
  /** Default: the built-in collector table. */
  readonly collectorTable?: readonly CollectorEntry[];
  /** Default: the built-in Catena collector. */
  readonly catenaCollector?: CatenaCollectorFactory;
}

export function inProcessChannels(deps: InProcessDeps): ChannelFactory {
  const runtimeDeps: RuntimeDeps = { ...deps, collectorTable: deps.collectorTable ?? COLLECTORS, catenaCollector: deps.catenaCollector ?? builtInCatenaCollectors() };
  return (_index, events) => {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (m: FromWorker) => events.message(m));
    new WorkerRuntime(port2 as unknown as RuntimePort, runtimeDeps);
    return {
      post: (m, transfer) => port1.postMessage(m, transfer),
      async terminate() {
        port1.close();
        port2.close();
      },
    };
  };
}
