import { setFlagsFromString } from 'node:v8';

/**
 * Whether a node or V8 flag was given to this process, on the node command line or in
 * NODE_OPTIONS: a setting the process would otherwise choose itself is then the user's.
 */
export function nodeFlagGiven(flag: string, execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  // V8 reads `-` and `_` alike in a flag's name.
  const name = flag.replace(/^--/, '').replace(/[-_]/g, '[-_]');
  const given = new RegExp(`^--${name}(=|$)`);
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((a) => given.test(a));
}

/** The flags that size V8's young generations: given any of them, the sizing is the user's. */
const SEMI_SPACE_FLAGS = ['--semi-space-growth-factor', '--max-semi-space-size', '--min-semi-space-size'];

export function semiSpaceFlagGiven(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  return SEMI_SPACE_FLAGS.some((flag) => nodeFlagGiven(flag, execArgv, nodeOptions));
}

/**
 * Keeps the serving thread's young generation at its first size (src/heap-flags.ts):
 * `--semi-space-growth-factor=1`, unless a semi-space flag was given. Starting a worker thread
 * undoes it (the serving thread's young generation then grew to 32 MiB while it kept objects), so
 * it is set again as each worker comes online (src/lib/worker-thread.ts).
 */
export function holdServingThreadYoungGeneration(): void {
  if (!semiSpaceFlagGiven()) setFlagsFromString('--semi-space-growth-factor=1');
}

/** The flag and its negation: either one given leaves pretenuring to the user. */
const PRETENURING_FLAGS = ['--allocation-site-pretenuring', '--no-allocation-site-pretenuring'];

/** `--no-allocation-site-pretenuring` (src/heap-flags.ts says why), unless either form was given. */
export function allocateYoung(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): void {
  if (!PRETENURING_FLAGS.some((flag) => nodeFlagGiven(flag, execArgv, nodeOptions))) setFlagsFromString('--no-allocation-site-pretenuring');
}
