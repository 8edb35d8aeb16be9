/**
 * How the pool reaches a worker runtime: a worker thread (the exporter's), or a runtime on this
 * thread over a MessageChannel (src/threads/in-process.ts). Both speak the same protocol, with the
 * same structured clone and transfer, so the pool cannot tell them apart except that only a
 * thread can crash. This module does not load the runtime: the serving thread never needs it.
 */
import { setFlagsFromString } from 'node:v8';
import type { ResourceLimits } from 'node:worker_threads';
import { nodeFlagGiven, semiSpaceFlagGiven } from '../lib/node-flags.js';
import { startWorker } from '../lib/worker-thread.js';
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
 * 50 MB lower). A worker keeps about 2.5 MB per 1,000-stream server, so 1 GiB is far above what it
 * needs; one that reaches it dies, is restarted, and the crash names the flag. An explicit
 * `--max-old-space-size` (NODE_OPTIONS or the node command line) applies to every thread.
 *
 * The young generation is where a poll's parsed pages live until they are mapped, and it stays
 * committed while polls come. A worker's is 12 MiB: two 4 MiB semi-spaces, and a space of that
 * size for large objects. It has that size from the worker's start
 * (startWorkerYoungGenerationsFull), because V8 grows a young generation only when most of what
 * it holds survives a collection, which a poll's garbage does not: one that started at V8's 1 MiB
 * stayed near it. With 4 MiB semi-spaces a 1,000-stream poll is scavenged 0.8 times instead of
 * 3.3, promotes 70 KB to the old generation instead of 1.4 MB, and needs no mark-compact, for
 * 1-5 MB more peak RSS. V8's default, semi-spaces that grow to 16 MiB, cost a 10,000-stream poll
 * 25-40 MB more RSS than 1 MiB ones.
 */
export const WORKER_OLD_GENERATION_MB = 1024;
export const WORKER_YOUNG_GENERATION_MB = 12;
/** V8 divides a young generation into two semi-spaces and a large-object space of one semi-space's size. */
export const WORKER_SEMI_SPACE_MB = WORKER_YOUNG_GENERATION_MB / 3;

/**
 * Worker threads started from now on have their young generation at full size from the start
 * (V8's `--min-semi-space-size`). The flag is the process's, read as each thread's heap is set
 * up: the serving thread's heap was set up as the process started and keeps its size
 * (src/heap-flags.ts). A semi-space flag given to node leaves the sizing to V8 and that flag.
 */
export function startWorkerYoungGenerationsFull(): void {
  if (!semiSpaceFlagGiven()) setFlagsFromString(`--min-semi-space-size=${WORKER_SEMI_SPACE_MB}`);
}

export function workerResourceLimits(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): ResourceLimits {
  const explicit = nodeFlagGiven('--max-old-space-size', execArgv, nodeOptions);
  const young = { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB };
  return explicit ? young : { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB, ...young };
}

export function threadChannels(entry: URL, settings: WorkerSettings): ChannelFactory {
  const resourceLimits = workerResourceLimits();
  startWorkerYoungGenerationsFull();
  return (index, events) => {
    const worker = startWorker(entry, { workerData: settings, name: `flussonic-exporter poller ${index}`, resourceLimits });
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
