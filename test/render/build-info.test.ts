/**
 * build_info carries version, revision (the git commit at build time, `unknown` outside git) and
 * nodejs_version; demo mode says plainly that the data is simulated (a gauge and the landing
 * page); LICENSE matches package.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createExporter } from '../../src/exporter.js';
import { SelfMetrics } from '../../src/serve/self.js';
import { ensureBuilt } from '../cli/exporter-process.js';
import { value } from '../helpers/exposition.js';
import { captureLogger, exporterConfig, serverConfig } from '../helpers/runtime.js';
import { REPO_ROOT } from '../helpers/shared.js';

function gitHead(): string | undefined {
  const r = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

describe('flussonic_exporter_build_info', () => {
  it('has version, revision and nodejs_version', async () => {
    const text = await new SelfMetrics({ version: '1.2.3', revision: 'abc1234', defaultMetrics: false }).render();
    expect(value(text, 'flussonic_exporter_build_info', { version: '1.2.3', revision: 'abc1234', nodejs_version: process.versions.node })).toBe(1);
  });

  it.skipIf(gitHead() === undefined)('the build writes the git commit, and the built exporter reports it', () => {
    ensureBuilt();
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'write-build-info.mjs')], { cwd: REPO_ROOT });
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', "import { readRevision } from './dist/version.js'; console.log(readRevision())"], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(out.trim()).toBe(gitHead());
  }, 120_000);

  it('outside a git checkout the revision is unknown', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fe-build-info-'));
    try {
      cpSync(join(REPO_ROOT, 'scripts', 'write-build-info.mjs'), join(dir, 'scripts', 'write-build-info.mjs'));
      // GIT_CEILING_DIRECTORIES keeps git from finding a repository above the temporary directory.
      execFileSync(process.execPath, [join(dir, 'scripts', 'write-build-info.mjs')], { cwd: dir, env: { ...process.env, GIT_CEILING_DIRECTORIES: tmpdir() } });
      expect(JSON.parse(readFileSync(join(dir, 'dist', 'build-info.json'), 'utf8'))).toMatchObject({ revision: 'unknown', branch: 'unknown' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('demo mode says the data is simulated', () => {
  it.each([true, false])('demo %s: flussonic_exporter_demo and the landing page banner', async (demo) => {
    const exporter = createExporter({ config: exporterConfig([serverConfig('edge', 'http://127.0.0.1:1')]), logger: captureLogger().logger, version: 'test', demo });
    try {
      const metrics = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(value(metrics, 'flussonic_exporter_demo')).toBe(demo ? 1 : 0);
      const page = (await exporter.app.inject({ method: 'GET', url: '/' })).body;
      expect(page.includes('simulated data')).toBe(demo);
    } finally {
      await exporter.stop();
    }
  });
});

describe('LICENSE', () => {
  it('is the MIT licence that package.json names, and ships with the package', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { license: string; files: string[] };
    expect(pkg.license).toBe('MIT');
    expect(pkg.files).toContain('LICENSE');
    const text = readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8');
    expect(text.split('\n')[0]).toBe('MIT License');
    expect(text).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  });
});
