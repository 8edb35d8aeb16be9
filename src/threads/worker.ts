/**
 * Entry of a worker thread: the built-in collectors, a logger whose finished lines go to the main
 * thread (which writes them where its own go, so there is one log stream), and the runtime.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { COLLECTORS } from '../collect/index.js';
import { createLogger } from '../logger.js';
import { builtInCatenaCollectors } from '../poll/targets.js';
import type { FromWorker, ToWorker, WorkerSettings } from './protocol.js';
import { WorkerRuntime, type RuntimePort } from './runtime.js';

if (!parentPort) throw new Error('src/threads/worker.ts runs only as a worker thread');
const port = parentPort;
const settings = workerData as WorkerSettings;
const log = createLogger(settings.logLevel, {
  write: (line: string) => port.postMessage({ type: 'log', line } satisfies FromWorker),
});
new WorkerRuntime(port as unknown as RuntimePort & { on(event: 'message', listener: (m: ToWorker) => void): unknown }, {
  log,
  collectorTable: COLLECTORS,
  catenaCollector: builtInCatenaCollectors(),
  userAgent: settings.userAgent,
  ...(settings.maxConnections !== undefined ? { maxConnections: settings.maxConnections } : {}),
});
