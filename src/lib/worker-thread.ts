/**
 * How the command starts a worker thread. Starting one undoes the serving thread's growth factor
 * of 1 (src/heap-flags.ts), so it is set again once the thread is online.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { holdServingThreadYoungGeneration } from './node-flags.js';

export function startWorker(entry: URL, options: WorkerOptions): Worker {
  const worker = new Worker(entry, options);
  worker.once('online', holdServingThreadYoungGeneration);
  return worker;
}
