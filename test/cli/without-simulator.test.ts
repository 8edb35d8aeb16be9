/**
 * An install without the optional simulator package (npm ci --omit=optional, the Docker image):
 * --demo and `simulate` say in one line what is missing and how to get it, and exit 1. The
 * exporter runs from a copy of dist/ whose node_modules has every package but the simulator
 * (or the simulator without its build), so its import fails as it does in such an install.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SIMULATOR_PACKAGE } from '../../src/demo.js';
import { REPO_ROOT } from '../helpers/shared.js';

const [SCOPE, NAME] = SIMULATOR_PACKAGE.split('/') as [string, string];

/** A copy of dist/ and package.json beside a node_modules linking every package of the repository's but the simulator. */
function installWithoutSimulator(root: string): void {
  cpSync(join(REPO_ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(root, 'package.json'));
  const modules = join(root, 'node_modules');
  mkdirSync(join(modules, SCOPE), { recursive: true });
  for (const entry of readdirSync(join(REPO_ROOT, 'node_modules'))) {
    if (entry !== SCOPE) symlinkSync(join(REPO_ROOT, 'node_modules', entry), join(modules, entry));
  }
  for (const entry of readdirSync(join(REPO_ROOT, 'node_modules', SCOPE))) {
    if (entry !== NAME) symlinkSync(join(REPO_ROOT, 'node_modules', SCOPE, entry), join(modules, SCOPE, entry));
  }
}

/**
 * A simulator in a node_modules above the copy (say /tmp/node_modules) is found as an installed
 * one would be, and the commands would then run instead of failing: named, rather than read as a
 * regression.
 */
function simulatorAbove(root: string): string | undefined {
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    const found = join(dir, 'node_modules', SCOPE, NAME);
    if (existsSync(found)) return found;
    if (dirname(dir) === dir) return undefined;
  }
}

function run(root: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.FLUSSONIC_EXPORTER_CONFIG;
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'dist', 'main.js'), ...args], { cwd: root, timeout: 15_000, env }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

const HOW = /the optional package @flussonic-exporter\/simulator, which is not installed or not built here .*--omit=optional.*Docker image.*`npm ci && npm run build`/;

describe.each([
  ['not installed', (_modules: string) => undefined],
  [
    'installed without its build',
    (modules: string) => {
      // The package as a link would give it: its package.json, no dist/.
      const dir = join(modules, SCOPE, NAME);
      mkdirSync(dir);
      cpSync(join(REPO_ROOT, 'packages', 'simulator', 'package.json'), join(dir, 'package.json'));
    },
  ],
])('with the simulator package %s', (state, prepare) => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'flussonic-exporter-nosim-'));
    const above = simulatorAbove(root);
    if (above !== undefined) throw new Error(`${above} is on the module path of ${root}, so the simulator would be found there: remove it to run these tests`);
    installWithoutSimulator(root);
    prepare(join(root, 'node_modules'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test.each([
    [['--demo', '--listen-address', '127.0.0.1:0'], /^flussonic-exporter: --demo needs the simulator, /],
    [['simulate', '--port', '0'], /^flussonic-exporter: `simulate` needs the simulator, /],
  ])('%j: one line saying what is missing and how to get it, exit 1', async (args, start) => {
    const result = await run(root, args);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(start);
    expect(result.stderr).toMatch(HOW);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  test.runIf(state === 'not installed')('everything else runs: --version and --check-config', async () => {
    expect(await run(root, ['--version'])).toMatchObject({ code: 0, stderr: '' });
    const config = join(root, 'config.yaml');
    writeFileSync(config, 'servers:\n  - name: a\n    url: http://127.0.0.1:1\n');
    const check = await run(root, ['--config', config, '--check-config']);
    expect(check).toMatchObject({ code: 0, stderr: '' });
    expect(check.stdout).toContain('valid');
  });
});
