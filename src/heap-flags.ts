/**
 * The V8 heap settings of the command, set before anything else allocates (the command imports
 * this module first). Each is left to the user when a flag of its own was given on the node
 * command line or in NODE_OPTIONS.
 *
 * - The serving thread's young generation does not grow. V8 doubles a thread's young generation
 *   whenever most of what it allocated survives a collection, up to 32 MiB, and the serving
 *   thread's start-up (loading its script, building the config) is such a time: its young
 *   generation reached 8 MiB and stayed committed while the thread then allocates little. With a
 *   growth factor of 1 it stays at 4 MiB, and a 1,000-stream server's process peaks 3-6 MB lower
 *   at the same CPU per poll. Starting a worker thread undoes this flag, so it is set again as
 *   each worker comes online (src/lib/worker-thread.ts). Poll workers are given their young
 *   generation's full size from their start instead (src/threads/channels.ts).
 * - No allocation-site pretenuring, in every thread (V8's flags are the process's). A poll's
 *   parsed pages and mapped streams live until the poll ends, so most of them survive the
 *   scavenges during the poll, and V8 then allocates what those sites make straight in the old
 *   generation. There it is garbage one poll later, and only a mark-compact, which marks every
 *   target's kept tables, frees it. Allocated young, it dies in a scavenge.
 */
import { allocateYoung, holdServingThreadYoungGeneration } from './lib/node-flags.js';

holdServingThreadYoungGeneration();
allocateYoung();
