/**
 * `npm pack` gives a tarball that installs without network, from npm's cache, and runs --demo in
 * a default install: the simulator (an optional workspace package) travels inside the tarball
 * (package.json `files`), and its `file:` optional dependency resolves to that copy. The install
 * runs with --offline (npm's only-if-cached mode: it never opens a connection to the registry);
 * where the cache lacks a package, the test skips with the reason printed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../cli/exporter-process.js';
import { REPO_ROOT } from '../helpers/shared.js';

const root = mkdtempSync(join(tmpdir(), 'fe-pack-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** npm without audit, fund and update checks (nothing else that would go to the network). */
function npm(args: string[], cwd: string) {
  return spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  });
}

/** Runs the installed bin with --demo on a free loopback port until /metrics has the demo's `up`; returns that line. */
async function demoMetric(bin: string): Promise<string> {
  const child = spawn(process.execPath, [bin, '--demo', '--web.listen-address=127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`--demo exited with ${child.exitCode}:\n${out}`);
      const port = /"msg":"listening"/.test(out) ? /"port":(\d+)[^\n]*"msg":"listening"/.exec(out)?.[1] : undefined;
      if (port) {
        const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
        const up = /^flussonic_up\{server="demo"\} 1$/m.exec(text);
        if (up) return up[0];
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no demo metric within 30 s:\n${out}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('npm pack', () => {
  it('installs offline from npm\'s cache and runs --demo', { timeout: 240_000 }, async (context) => {
    ensureBuilt();
    const packed = npm(['pack', '--silent', '--pack-destination', root], REPO_ROOT);
    expect(packed.status, packed.stderr).toBe(0);
    const tarball = readdirSync(root).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();

    const app = join(root, 'app');
    rmSync(app, { recursive: true, force: true });
    spawnSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-test', version: '1.0.0', private: true }));
    const cache = npm(['config', 'get', 'cache'], REPO_ROOT).stdout.trim();
    const installed = npm(['install', '--offline', '--cache', cache, join(root, tarball!)], app);
    if (installed.status !== 0 && /ENOTCACHED|offline/i.test(installed.stderr)) {
      console.warn(`skipping: npm's cache (${cache}) lacks a package of the tarball's dependencies:\n${installed.stderr.split('\n').slice(0, 5).join('\n')}`);
      context.skip();
    }
    expect(installed.status, installed.stderr).toBe(0);
    expect(await demoMetric(join(app, 'node_modules', '.bin', 'flussonic-exporter'))).toBe('flussonic_up{server="demo"} 1');
  });
});
