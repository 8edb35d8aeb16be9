/**
 * The program's entry scripts, by path under dist/: the command and the two kinds of thread it
 * starts. The build bundles each one, with everything it loads, into a single file at that same
 * path (scripts/bundle.mjs reads this table), and a thread is started from that path. This module
 * sits at the root of src/, so `new URL(path, import.meta.url)` names the same file whether it runs
 * as dist/thread-entries.js or inside the bundled dist/main.js.
 */
export const ENTRY_SCRIPTS = {
  command: 'main.js',
  poller: 'threads/worker.js',
  bcrypt: 'serve/bcrypt-worker.js',
} as const;

export type EntryName = keyof typeof ENTRY_SCRIPTS;

/**
 * An entry's built file. Run from the TypeScript sources (vitest), a thread cannot load .ts files:
 * the built one in dist/ is used (`npm test` builds it first, and the vitest global setup rebuilds
 * it when a source is newer).
 */
export function entryScript(name: EntryName): URL {
  const here = import.meta.url;
  return new URL(ENTRY_SCRIPTS[name], here.endsWith('.ts') ? new URL('../dist/', here) : here);
}
