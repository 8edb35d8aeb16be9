/**
 * The conventions Prometheus exporters' users expect, through `node dist/main.js`: the dotted
 * flags (--config.file, --config.check, --log.level, --log.format) with the old names as aliases,
 * --version in Prometheus' form, --config.check checking every flag, and POST /-/reload behind
 * --web.enable-lifecycle.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ConfigDir } from '../config/config-files.js';
import { REPO_ROOT } from '../helpers/shared.js';
import { ensureBuilt, ExporterProcess, killAll, runToExit } from './exporter-process.js';

const dir = new ConfigDir();
const SECRET = 'TOPSECRET-conventions-5150';

beforeAll(() => ensureBuilt(), 120_000);
afterEach(() => killAll());
afterAll(() => dir.cleanup());

/** One server on a loopback port where nothing listens (its polls fail fast). */
function config(name: string, server = 'edge-1'): string {
  return dir.write(`${name}.yaml`, `servers:\n  - name: ${server}\n    url: http://127.0.0.1:1\n    username: monitor\n    password: ${SECRET}\n`);
}

describe('--version', () => {
  test("prints Prometheus' form: version, branch, revision, build user and date, node version", async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await runToExit(['--version']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^flussonic-exporter, version ${version.replace(/\./g, '\\.')} \\(branch: [\\w./-]+, revision: ([0-9a-f]{40}|unknown)\\)$`));
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^ {2}build user: +\S+$/),
      expect.stringMatching(/^ {2}build date: +(\d{8}-\d\d:\d\d:\d\d|unknown)$/),
      `  node version:     ${process.version}`,
      `  platform:         ${process.platform}/${process.arch}`,
    ]);
  });
});

describe('--config.file and --config.check, with --config and --check-config as aliases', () => {
  test.each([
    [['--config.file', 'FILE', '--config.check']],
    [['-c', 'FILE', '--config.check']],
    [['--config', 'FILE', '--config.check']],
    [['--config.file=FILE', '--check-config']],
  ])('%j: valid', async (args) => {
    const file = config('valid');
    const result = await runToExit(args.map((a) => a.replace('FILE', file)));
    expect(result).toMatchObject({ code: 0, stdout: `${file}: valid (1 servers, 0 catena)\n`, stderr: '' });
  });

  test('the flag and its alias with different values are refused', async () => {
    const result = await runToExit(['--config.file', config('a'), '--config', config('b'), '--config.check']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--config.file and its alias --config are both given, with different values/);
  });

  test.each([['--config.check'], ['--check-config']])('%s checks the flags too: shard 3 of 3 is refused as at start', async (check) => {
    const file = config('shards');
    const result = await runToExit(['--config.file', file, check, '--shard', '3', '--total-shards', '3']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toEqual(['flussonic-exporter: --shard: shard must be an integer from 0 to 2 (below the total of 3), got 3 (see --help)']);
    // The same flags at start fail the same way.
    const start = await runToExit(['--config.file', file, '--shard', '3', '--total-shards', '3', '--web.listen-address', '127.0.0.1:0']);
    expect([start.code, start.stderr]).toEqual([2, result.stderr]);
    expect((await runToExit(['--config.file', file, check, '--shard', '2', '--total-shards', '3'])).code).toBe(0);
  });

  test.each([
    [['--log.format', 'xml'], /^flussonic-exporter: --log.format: expected one of json, logfmt, got "xml"/],
    [['--log.level', 'trace'], /^flussonic-exporter: --log.level: expected one of debug, info, warn, error, got "trace"/],
    [['--web.max-requests', '0'], /^flussonic-exporter: --web.max-requests: expected a whole number/],
  ])('%j is refused by --config.check', async (flags, message) => {
    const result = await runToExit(['--config.file', config('flags'), '--config.check', ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});

describe('--log.level and --log.format', () => {
  test('logfmt lines with text levels, from the main thread and the workers; --log.level debug shows the debug lines', async () => {
    const exporter = new ExporterProcess(['--config.file', config('logfmt'), '--web.listen-address', '127.0.0.1:0', '--log.level', 'debug', '--log.format', 'logfmt']);
    const [, port] = await exporter.waitForOutput(/^ts=\S+ level=info msg=listening .*address\.port=(\d+)/m);
    // A worker thread's line (the poll of edge-1), at debug.
    await exporter.waitForOutput(/^ts=\S+ level=debug msg="poll finished" .*server=edge-1 /m);
    expect(exporter.stdout).not.toMatch(/^\{/m);
    expect((await fetch(`http://127.0.0.1:${port}/-/healthy`)).status).toBe(200);
    exporter.child.kill('SIGTERM');
    expect((await exporter.exitWithin(5000)).code).toBe(0);
    // The stop line is written before the exit.
    expect(exporter.stdout).toMatch(/^ts=\S+ level=info msg=stopping .*signal=SIGTERM/m);
    expect(exporter.stdout).not.toContain(SECRET);
  });

  test('--log.level warn leaves out the info lines; JSON stays the default', async () => {
    const exporter = new ExporterProcess(['--config.file', config('warn'), '--web.listen-address', '127.0.0.1:0', '--log.level', 'warn']);
    // A failed collector is a warning: the first poll of a server where nothing listens.
    const line = await exporter.waitForLog((l) => l.msg !== undefined && l.msg.startsWith('collector failed'));
    expect(line.level).toBe(40);
    expect(exporter.logs.filter((l) => (l.level as number) < 40)).toEqual([]);
  });
});

describe('POST /-/reload', () => {
  async function start(name: string, flags: readonly string[]): Promise<{ exporter: ExporterProcess; base: string; file: string }> {
    const file = config(name);
    const exporter = new ExporterProcess(['--config.file', file, '--web.listen-address', '127.0.0.1:0', ...flags]);
    return { exporter, base: await exporter.baseUrl(), file };
  }

  test('without --web.enable-lifecycle: 403 "Lifecycle API is not enabled." and nothing reloaded', async () => {
    const { exporter, base } = await start('no-lifecycle', []);
    dir.write('no-lifecycle.yaml', 'servers:\n  - name: renamed\n    url: http://127.0.0.1:1\n');
    const res = await fetch(`${base}/-/reload`, { method: 'POST' });
    expect([res.status, await res.text()]).toEqual([403, 'Lifecycle API is not enabled.\n']);
    expect(exporter.logs.some((l) => l.msg === 'configuration reloaded')).toBe(false);
    expect(await (await fetch(`${base}/metrics`)).text()).not.toContain('server="renamed"');
  });

  test('with it: a good config is applied (200), a bad one refused (500) and the previous one keeps running; GET is 405', async () => {
    const { exporter, base } = await start('lifecycle', ['--web.enable-lifecycle']);
    const get = await fetch(`${base}/-/reload`);
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);

    dir.write('lifecycle.yaml', 'servers:\n  - name: renamed\n    url: http://127.0.0.1:1\n');
    const good = await fetch(`${base}/-/reload`, { method: 'POST' });
    expect([good.status, await good.text()]).toEqual([200, '']);
    // Written before the answer; read from the pipe, it may arrive after it.
    const reloaded = await exporter.waitForLog((l) => l.msg === 'configuration reloaded');
    expect(reloaded).toMatchObject({ trigger: '/-/reload' });
    let metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).not.toContain('server="edge-1"');
    // The new server's first poll comes soon after (a bounded wait for it).
    for (let i = 0; i < 150 && !/^flussonic_up\{server="renamed"\} /m.test(metrics); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      metrics = await (await fetch(`${base}/metrics`)).text();
    }
    expect(metrics).toMatch(/^flussonic_up\{server="renamed"\} /m);

    dir.write('lifecycle.yaml', `servers:\n  - name: renamed\n    url: http://127.0.0.1:1\n    username: monitor\n    password: ${SECRET}\n    colour: red\n`);
    const bad = await fetch(`${base}/-/reload`, { method: 'POST' });
    expect(bad.status).toBe(500);
    expect(await bad.text()).toBe('failed to reload config: the new configuration is invalid (1 problem, see the log); the previous one keeps running\n');
    metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^flussonic_exporter_config_last_reload_success 0$/m);
    expect(metrics).toMatch(/^flussonic_up\{server="renamed"\} /m);
    expect(metrics).toMatch(/^flussonic_exporter_http_requests_total\{path="\/-\/reload",code="500"\} 1$/m);
    expect(exporter.stdout + exporter.stderr).not.toContain(SECRET);
  });
});
