/**
 * How the pool reaches a worker runtime: a worker thread (the exporter's), or a runtime on this
 * thread over a MessageChannel (src/threads/in-process.ts). Both speak the same protocol, with the
 * same structured clone and transfer, so the pool cannot tell them apart except that only a
 * thread can crash. This module does not load the runtime: the serving thread never needs it.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { nodeFlagGiven } from '../lib/node-flags.js';
import type { FromWorker, ToWorker, WorkerSettings } from './protocol.js';

export interface WorkerChannel {
  /** Posts a message; the buffers listed move with it (transferred, detached here). */
  post(message: ToWorker, transfer?: readonly ArrayBuffer[]): void;
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
 * Heap limits of a worker thread. V8 sizes a heap's growth by its limit: under the default limit
 * (a quarter of the machine's memory, up to 4 GB) an isolate lets its heap grow to about four times
 * what it keeps before collecting, and a poll leaves its parsed pages and sample tables behind.
 * Under 1 GiB the factor is nearer 1.5 (a 10,000-stream / 100,000-session poll loop peaks about
 * 50 MB lower). The young generation is the headroom a poll's parsed pages pass through, and it
 * stays committed at its full size while polls come: 4 MiB keeps a 10,000-stream poll's RSS
 * 25-40 MB below the default's, and 10-20 MB per 40 servers of a fleet, at no cost in
 * instructions per poll. A worker keeps about 2.5 MB per 1,000-stream server, so 1 GiB is far
 * above what it needs; one that reaches it dies, is restarted, and the crash names the flag. An
 * explicit `--max-old-space-size` (NODE_OPTIONS or the node command line) applies to every thread.
 */
export const WORKER_OLD_GENERATION_MB = 1024;
export const WORKER_YOUNG_GENERATION_MB = 4;

export function workerResourceLimits(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): ResourceLimits {
  const explicit = nodeFlagGiven('--max-old-space-size', execArgv, nodeOptions);
  const young = { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB };
  return explicit ? young : { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB, ...young };
}

export function threadChannels(entry: URL, settings: WorkerSettings): ChannelFactory {
  const resourceLimits = workerResourceLimits();
  return (index, events) => {
    const worker = new Worker(entry, { workerData: settings, name: `flussonic-exporter poller ${index}`, resourceLimits });
    let terminating = false;
    let failure: unknown;
    worker.on('message', (m: FromWorker) => events.message(m));
    worker.on('error', (err) => (failure = err));
    worker.on('exit', (code) => {
      if (terminating) return;
      events.exit(exitReason(failure, code, resourceLimits));
    });
    return {
      post: (m, transfer) => worker.postMessage(m, transfer),
      async terminate() {
        terminating = true;
        await worker.terminate();
      },
    };
  };
}

/** Why a worker ended, for the crash log line; running out of heap names the flag that raises it. */
export function exitReason(failure: unknown, code: number, limits: ResourceLimits): string {
  if ((failure as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    const limit = limits.maxOldGenerationSizeMb === undefined ? 'the heap limit' : `its ${limits.maxOldGenerationSizeMb} MB heap limit`;
    return `out of memory: the worker reached ${limit}; give more with NODE_OPTIONS=--max-old-space-size=<MB>, or spread the targets over more workers`;
  }
  if (failure instanceof Error) return `uncaught error: ${failure.message}`;
  if (failure !== undefined) return `uncaught error: ${String(failure)}`;
  return `exited with code ${code}`;
}
