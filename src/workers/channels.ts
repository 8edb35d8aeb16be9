/**
 * How the pool reaches a worker runtime: a worker thread (production), or a runtime on this thread
 * over a MessageChannel, for collectors passed as functions, which cannot cross threads (tests
 * with scripted collectors). Both speak the same protocol, with the same structured clone and
 * transfer, so the pool cannot tell them apart except that only a thread can crash.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerSettings } from './protocol.js';
import { WorkerRuntime, type RuntimeDeps, type RuntimePort } from './runtime.js';

export interface WorkerChannel {
  post(message: ToWorker): void;
  /** Ends the worker; no exit event follows. */
  terminate(): Promise<void>;
}

export interface ChannelEvents {
  message(message: FromWorker): void;
  /** The worker ended without being asked to (uncaught error, process.exit), with the reason. */
  exit(reason: string): void;
}

export type ChannelFactory = (index: number, events: ChannelEvents) => WorkerChannel;

/**
 * The compiled worker entry beside this module. Run from the TypeScript sources (vitest), a
 * thread cannot load .ts files: the compiled one in dist/ is used (`npm test` builds it first, and
 * the vitest global setup rebuilds it when a source is newer).
 */
export function defaultWorkerEntry(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../dist/workers/worker.js', here) : new URL('./worker.js', here);
}

export function threadChannels(entry: URL, settings: WorkerSettings): ChannelFactory {
  return (index, events) => {
    const worker = new Worker(entry, { workerData: settings, name: `flussonic-exporter poller ${index}` });
    let terminating = false;
    let failure: unknown;
    worker.on('message', (m: FromWorker) => events.message(m));
    worker.on('error', (err) => (failure = err));
    worker.on('exit', (code) => {
      if (terminating) return;
      const why = failure instanceof Error ? `uncaught error: ${failure.message}` : failure !== undefined ? `uncaught error: ${String(failure)}` : `exited with code ${code}`;
      events.exit(why);
    });
    return {
      post: (m) => worker.postMessage(m),
      async terminate() {
        terminating = true;
        await worker.terminate();
      },
    };
  };
}

export function inProcessChannels(deps: RuntimeDeps): ChannelFactory {
  return (_index, events) => {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (m: FromWorker) => events.message(m));
    new WorkerRuntime(port2 as unknown as RuntimePort, deps);
    return {
      post: (m) => port1.postMessage(m),
      async terminate() {
        port1.close();
        port2.close();
      },
    };
  };
}
