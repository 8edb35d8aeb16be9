#!/usr/bin/env node
// `npm start`'s build step, and the tests': runs `npm run build` only when a source is newer than
// what it built (the simulator's dist/index.js, the bundled entries and their list), so a second
// start goes straight to the demo. Sources: src/, packages/simulator/src/, the tsconfig files, the
// bundle script, package.json and package-lock.json.
// The build info (git revision) is rewritten every time: it is cheap and follows a new commit.
//
//   node scripts/build-if-stale.mjs           build when stale
//   node scripts/build-if-stale.mjs --check   print "stale" or "fresh", build nothing (exit 0)
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['src', 'packages/simulator/src', 'tsconfig.json', 'tsconfig.build.json', 'packages/simulator/tsconfig.json', 'packages/simulator/package.json', 'scripts/bundle.mjs', 'package.json', 'package-lock.json'];
// dist/bundles.json is written after the last bundle: a build that stopped half-way is stale.
const OUTPUTS = ['packages/simulator/dist/index.js', 'dist/main.js', 'dist/threads/worker.js', 'dist/bundles.json'];

/** Newest modification time under a path (0 when absent). */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let max = stat.mtimeMs; // a deleted or renamed file changes its directory
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

/** Oldest modification time of the outputs (0 when one is missing). */
function oldestOutput() {
  return Math.min(...OUTPUTS.map((p) => newest(join(ROOT, p))));
}

const stale = oldestOutput() < Math.max(...SOURCES.map((p) => newest(join(ROOT, p))));
if (process.argv.includes('--check')) {
  console.log(stale ? 'stale' : 'fresh');
  process.exit(0);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (args) => {
  const result = spawnSync(npm, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
if (stale) run(['run', 'build', '--silent']);
else {
  const info = spawnSync(process.execPath, [join(ROOT, 'scripts', 'write-build-info.mjs')], { stdio: 'inherit' });
  if (info.status !== 0) process.exit(info.status ?? 1);
}
