/**
 * The serving thread's young generation does not grow. V8 doubles a thread's young generation
 * whenever most of what it allocated survives a collection, up to 32 MiB, and the serving
 * thread's start-up (loading its script, building the config) is such a time: its young
 * generation reached 8 MiB and stayed committed while the thread then allocates little. With a
 * growth factor of 1 it stays at 4 MiB, and a 1,000-stream server's process peaks 3-6 MB lower
 * at the same CPU per poll. The flag is the process's, and starting a worker thread undoes it:
 * it is set again as each worker comes online (src/lib/worker-thread.ts). Poll workers are given
 * their young generation's full size from their start instead (src/threads/channels.ts).
 *
 * The command imports this module first, so it runs before any other module allocates. A
 * semi-space flag given on the node command line or in NODE_OPTIONS is left to rule.
 */
import { holdServingThreadYoungGeneration } from './lib/node-flags.js';

holdServingThreadYoungGeneration();
