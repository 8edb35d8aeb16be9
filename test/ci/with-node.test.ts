/**
 * scripts/with-node.sh runs a command on another Node release (README: 20, 22 and 24 are
 * supported). Offline here: a release already unpacked is used as it is, and bad arguments stop
 * before anything is fetched.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'with-node.sh');
const root = mkdtempSync(join(tmpdir(), 'with-node-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A copy of the script in a project of its own, with a fake release 1.2.3 unpacked. */
function project(): string {
  mkdirSync(join(root, 'scripts'), { recursive: true });
  copyFileSync(SCRIPT, join(root, 'scripts', 'with-node.sh'));
  const bin = join(root, '.tmp', 'node', '1.2.3', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'node'), '#!/bin/sh\necho "v1.2.3 $*"\n');
  chmodSync(join(bin, 'node'), 0o755);
  return join(root, 'scripts', 'with-node.sh');
}

function run(script: string, args: string[]) {
  return spawnSync('bash', [script, ...args], { encoding: 'utf8', timeout: 10_000 });
}

describe('scripts/with-node.sh', () => {
  it('runs the command with the unpacked release first on PATH', () => {
    const r = run(project(), ['1.2.3', 'node', '--version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('v1.2.3 --version\n');
  });

  it('stops with a usage line when the command is missing', () => {
    const r = run(project(), ['22']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('usage: scripts/with-node.sh <major or x.y.z> <command>');
  });

  it('names an argument that is not a version, before fetching anything', () => {
    const r = run(project(), ['lts/jod', 'node', '-v']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("with-node: 'lts/jod' is not a Node version (a major such as 24, or x.y.z)\n");
  });
});
