/**
 * scripts/build-if-stale.mjs (`npm start`'s build step) builds only when a source is newer than
 * the outputs: checked with --check in a project of its own, where times are set by the test.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'build-if-stale.mjs');
const root = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const OUTPUTS = ['packages/simulator/dist/index.js', 'dist/main.js', 'dist/threads/worker.js', 'dist/bundles.json'];
const SOURCES = ['src/main.ts', 'packages/simulator/src/index.ts', 'scripts/bundle.mjs', 'tsconfig.json', 'package.json'];

function touch(path: string, seconds: number): void {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, '');
  utimesSync(full, seconds, seconds);
}

function check(): string {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-if-stale.mjs'), '--check'], { encoding: 'utf8', timeout: 10_000 });
  expect(r.status).toBe(0);
  return r.stdout.trim();
}

describe('npm start builds only when sources changed', () => {
  it('is fresh when every output is newer than every source, stale otherwise', () => {
    mkdirSync(join(root, 'scripts'), { recursive: true });
    copyFileSync(SCRIPT, join(root, 'scripts', 'build-if-stale.mjs'));
    const t = 1_700_000_000;
    for (const s of SOURCES) touch(s, t);
    // Directories count too (a deleted file changes its directory's time).
    for (const d of ['src', 'packages/simulator/src']) utimesSync(join(root, d), t, t);
    for (const o of OUTPUTS) touch(o, t + 100);
    expect(check()).toBe('fresh');
    touch('src/main.ts', t + 200);
    expect(check()).toBe('stale');
    for (const o of OUTPUTS) touch(o, t + 300);
    expect(check()).toBe('fresh');
    touch('packages/simulator/src/index.ts', t + 400);
    expect(check()).toBe('stale');
    for (const o of OUTPUTS) touch(o, t + 500);
    touch('scripts/bundle.mjs', t + 600);
    expect(check()).toBe('stale');
    for (const o of OUTPUTS) touch(o, t + 700);
    rmSync(join(root, 'dist', 'bundles.json'));
    expect(check()).toBe('stale');
    touch('dist/bundles.json', t + 700);
    rmSync(join(root, 'dist', 'threads', 'worker.js'));
    expect(check()).toBe('stale');
  });
});
