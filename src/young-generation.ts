/**
 * The serving thread's young generation does not grow. V8 doubles a thread's young generation
 * whenever most of what it allocated survives a collection, up to 32 MiB, and the serving
 * thread's start-up (loading its script, building the config) is such a time: its young
 * generation reached 8 MiB and stayed committed while the thread then allocates little. With a
 * growth factor of 1 it stays at 4 MiB, and a 1,000-stream server's process peaks 3-6 MB lower
 * at the same CPU per poll. A worker thread's young generation is capped besides
 * (WORKER_YOUNG_GENERATION_MB), and the flag is the process's, so it holds there too: under a
 * poll's load a worker's young generation stays near its first size (a 1,000-stream poll
 * scavenges as often with an 8 MiB cap as with 4, and a third less with 8 and V8's factor of 2),
 * though a thread in which nearly everything survives still reaches its cap.
 *
 * The command imports this module first, so it runs before any other module allocates. A
 * semi-space flag given on the node command line or in NODE_OPTIONS is left to rule.
 */
import { setFlagsFromString } from 'node:v8';
import { nodeFlagGiven } from './lib/node-flags.js';

/** The flags that size the young generation: given any of them, the user's choice stands. */
const SEMI_SPACE_FLAGS = ['--semi-space-growth-factor', '--max-semi-space-size', '--min-semi-space-size'];

if (!SEMI_SPACE_FLAGS.some((flag) => nodeFlagGiven(flag))) setFlagsFromString('--semi-space-growth-factor=1');
