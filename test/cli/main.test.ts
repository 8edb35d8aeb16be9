/**
 * The flussonic-exporter command as a user runs it: `node dist/main.js` in a child process, with
 * exit codes, stderr reasons, signals and the served endpoints.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ConfigDir } from '../config/config-files.js';
import { COLLECTORS } from '../../src/collect/index.js';
import { CATALOGUE } from '../../src/serve/catalogue.js';
import { COLLECTOR_DEFAULTS } from '../../src/config/switches.js';
import { REPO_ROOT } from '../helpers/shared.js';
import { ensureBuilt, ExporterProcess, killAll, runToExit } from './exporter-process.js';

const SECRET = 'TOPSECRET-cli-4711';
const dir = new ConfigDir();

beforeAll(() => ensureBuilt(), 120_000);
afterEach(() => killAll());
afterAll(() => dir.cleanup());

/** A valid config: one server on a loopback port where nothing listens (polls fail fast). */
function goodConfig(name = 'edge-1', extra = ''): string {
  return dir.write(
    `${name}.yaml`,
    `log_level: info\nservers:\n  - name: ${name}\n    url: http://127.0.0.1:1\n    username: monitor\n    password: ${SECRET}\n${extra}`,
  );
}

/** Readiness is only observable over HTTP: a bounded poll of /-/ready. */
async function waitUntilReady(base: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt++) {
    if ((await fetch(`${base}/-/ready`)).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${base}/-/ready did not turn 200 within 15 s`);
}

async function text(url: string): Promise<string> {
  const response = await fetch(url);
  return response.text();
}

describe('short commands', () => {
  test('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await runToExit(['--version']);
    // Prometheus' form (test/cli/conventions.test.ts): the version on the first line.
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.split('\n')[0]).toContain(`, version ${version} (`);
  });

  test('--help prints the usage', async () => {
    const result = await runToExit(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage:/);
    expect(result.stdout).toContain('--check-config');
  });

  test('without a config and without --demo: exit 2, one line saying how to start', async () => {
    const result = await runToExit([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/--config FILE.*FLUSSONIC_EXPORTER_CONFIG.*--demo/);
  });

  test('a --web.telemetry-path that is no clean path, or that another route takes: exit 2, one line naming the flag', async () => {
    for (const path of ['//m', '/events/edge-1']) {
      const result = await runToExit(['--demo', '--web.telemetry-path', path]);
      expect(result.code, path).toBe(2);
      expect(result.stderr.trimEnd().split('\n'), path).toHaveLength(1);
      expect(result.stderr, path).toContain(`--web.telemetry-path: must be a path like /metrics`);
    }
  });

  test('an unknown option: exit 2 with a one-line reason', async () => {
    const result = await runToExit(['--conifg', 'x.yaml']);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain("Unknown option '--conifg'");
  });
});

describe('--check-config', () => {
  test('a valid config: exit 0 and says so', async () => {
    const file = goodConfig();
    const result = await runToExit(['--config', file, '--check-config']);
    expect(result).toMatchObject({ code: 0, stdout: `${file}: valid (1 servers, 0 catena)\n`, stderr: '' });
  });

  test('the config may come from FLUSSONIC_EXPORTER_CONFIG', async () => {
    const result = await runToExit(['--check-config'], { FLUSSONIC_EXPORTER_CONFIG: goodConfig() });
    expect(result.code).toBe(0);
  });

  test('an invalid config: exit 2 and every problem printed with path and line, no secret', async () => {
    const file = dir.write(
      'bad.yaml',
      ['servers:', '  - name: a', `    url: http://admin:${SECRET}@h`, '    timeout: 10', '  - name: a', '    url: http://h', '    pasword: x'].join('\n'),
    );
    const result = await runToExit(['--config', file, '--check-config']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`flussonic-exporter: invalid config ${file}: 4 problems`);
    expect(lines.slice(1)).toEqual([
      '  servers[0].url: must not contain credentials; use username/password or bearer_token (line 3)',
      '  servers[0].timeout: a number (10) is not a duration (add a unit): use a number with a unit, e.g. 500ms, 15s, 2m, 1h (line 4)',
      '  servers[1].name: duplicate name "a" (already used by servers[0]); names must be unique (line 5)',
      '  servers[1].pasword: unknown key (did you mean password?) (line 7)',
    ]);
    expect(result.stderr).not.toContain(SECRET);
  });

  test('a config file that does not exist: exit 2', async () => {
    const result = await runToExit(['--config', join(dir.path, 'absent.yaml'), '--check-config']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot read the config file (ENOENT)');
  });
});

describe('the running exporter', () => {
  test('SIGTERM: a clean exit 0 within 5 s', async () => {
    const exporter = new ExporterProcess(['--config', goodConfig(), '--listen-address', '127.0.0.1:0']);
    const base = await exporter.baseUrl();
    expect((await fetch(`${base}/-/healthy`)).status).toBe(200);
    exporter.child.kill('SIGTERM');
    const exit = await exporter.exitWithin(5000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exporter.logs.some((l) => l.msg === 'stopping')).toBe(true);
    expect(exporter.stdout + exporter.stderr).not.toContain(SECRET);
  });

  test('SIGINT stops it the same way', async () => {
    const exporter = new ExporterProcess(['--config', goodConfig(), '--listen-address', '127.0.0.1:0']);
    await exporter.baseUrl();
    exporter.child.kill('SIGINT');
    expect(await exporter.exitWithin(5000), exporter.stdout + exporter.stderr).toEqual({ code: 0, signal: null });
  });

  test('the port is taken: exit 1 with a one-line reason', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const exporter = new ExporterProcess(['--config', goodConfig(), '--listen-address', `127.0.0.1:${port}`]);
      const exit = await exporter.exitWithin(10_000);
      expect(exit.code).toBe(1);
      expect(exporter.stderr.trimEnd().split('\n')).toEqual([`flussonic-exporter: cannot listen on 127.0.0.1:${port}: address already in use (another process has the port; choose another with --web.listen-address)`]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  test('a bad config at start: exit 2 with the problems', async () => {
    const file = dir.write('start-bad.yaml', 'servers:\n  - name: a\n');
    const exporter = new ExporterProcess(['--config', file, '--listen-address', '127.0.0.1:0']);
    expect((await exporter.exitWithin(10_000)).code).toBe(2);
    expect(exporter.stderr).toContain('servers[0].url: required');
  });

  test('SIGHUP: a bad new config is logged and the old one keeps running; a good one is applied', async () => {
    const file = goodConfig('reload');
    const exporter = new ExporterProcess(['--config', file, '--listen-address', '127.0.0.1:0']);
    const base = await exporter.baseUrl();
    await waitUntilReady(base);
    expect(await text(`${base}/metrics`)).toMatch(/^flussonic_exporter_config_last_reload_success 1$/m);

    dir.write('reload.yaml', `servers:\n  - name: reload\n    url: http://127.0.0.1:1\n    password: ${SECRET}\n    colour: red\n`);
    exporter.child.kill('SIGHUP');
    const failure = await exporter.waitForLog((l) => l.msg === 'the new configuration is invalid; the previous one keeps running');
    expect(JSON.stringify(failure.problems)).toContain('servers[0].colour');
    const afterBad = await text(`${base}/metrics`);
    expect(afterBad).toMatch(/^flussonic_exporter_config_last_reload_success 0$/m);
    expect(afterBad).toMatch(/^flussonic_up\{server="reload"\} /m);

    dir.write('reload.yaml', 'servers:\n  - name: renamed\n    url: http://127.0.0.1:1\n');
    exporter.child.kill('SIGHUP');
    await exporter.waitForLog((l) => l.msg === 'configuration reloaded');
    const afterGood = await text(`${base}/metrics`);
    expect(afterGood).toMatch(/^flussonic_exporter_config_last_reload_success 1$/m);
    expect(afterGood).not.toContain('server="reload"');
    expect(exporter.stdout + exporter.stderr).not.toContain(SECRET);

    exporter.child.kill('SIGTERM');
    expect((await exporter.exitWithin(5000)).code).toBe(0);
  });
});

/** What the demo must show of each collector (the simulator has GPUs, DVR storages and sessions). */
const DEMO_EXPECTED: Readonly<Record<string, readonly RegExp[]>> = {
  streams: [/^flussonic_stream_alive\{server="demo",stream="[^"]+"\} [01]$/m, /^flussonic_stream_track_info\{server="demo",/m],
  server: [/^flussonic_server_info\{server="demo",/m, /^flussonic_transcoder_device_info\{server="demo",/m],
  sessions: [/^flussonic_sessions\{server="demo",/m, /^flussonic_sessions_sent_bytes_total\{server="demo",/m],
  dvrs: [/^flussonic_dvr_storage_size_bytes\{server="demo",/m],
};

describe('simulate', () => {
  test('runs the simulator alone on the given port until SIGTERM', async () => {
    const simulator = new ExporterProcess(['simulate', '--port', '0', '--streams', '3', '--sessions', '5', '--seed', '7']);
    const [, apiUrl] = await simulator.waitForOutput(/media server API: (http:\/\/127\.0\.0\.1:\d+\/streamer\/api\/v3)/);
    await simulator.waitForOutput(/Stop with Ctrl-C\./);
    const page = (await (await fetch(`${apiUrl}/streams?select=name`)).json()) as { streams: { name: string }[] };
    expect(page.streams).toHaveLength(3);
    simulator.child.kill('SIGTERM');
    expect(await simulator.exitWithin(5000)).toEqual({ code: 0, signal: null });
    expect(simulator.stdout).toContain('simulator stopped');
  });

  test('bad simulate flags: exit 2', async () => {
    const result = await runToExit(['simulate', '--streams', 'many']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^flussonic-exporter simulate: /);
  });
});

describe('--demo', () => {
  test('--demo-full serves flussonic_ metrics of the embedded simulator: every built-in collector and catena', async () => {
    const exporter = new ExporterProcess(['--demo-full', '--listen-address', '127.0.0.1:0']);
    const base = await exporter.baseUrl();
    await waitUntilReady(base);
    const metrics = await text(`${base}/metrics`);
    expect(metrics).toMatch(/^flussonic_up\{server="demo"\} 1$/m);
    expect(COLLECTORS.map((c) => c.name)).toEqual(expect.arrayContaining(['streams', 'server']));
    for (const [collector, patterns] of Object.entries(DEMO_EXPECTED)) {
      if (!COLLECTORS.some((c) => c.name === collector)) {
        console.warn(`skipping the demo checks of collector ${collector}: it is not in this build's collector table`);
        continue;
      }
      expect(metrics).toMatch(new RegExp(`^flussonic_exporter_collector_success\\{server="demo",collector="${collector}"\\} 1$`, 'm'));
      for (const pattern of patterns) expect(metrics, collector).toMatch(pattern);
    }
    expect(metrics).toMatch(/^flussonic_catena_up\{catena="demo"\} 1$/m);
    expect(metrics).toMatch(/^flussonic_catena_subscriptions_created_total\{catena="demo",portal="demo",package="[^"]+"\} \d+/m);
    expect(metrics).toMatch(/^flussonic_catena_billed_amount_total\{catena="demo",portal="demo",package="[^"]+",currency="EUR"\} /m);
    expect(exporter.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('DEMO MODE'))).toBe(true);
    exporter.child.kill('SIGTERM');
    expect((await exporter.exitWithin(5000)).code).toBe(0);
  }, 30_000);

  test('--demo alone runs the default settings: default collectors and families only, as a new config gets', async () => {
    const exporter = new ExporterProcess(['--demo', '--listen-address', '127.0.0.1:0']);
    const base = await exporter.baseUrl();
    await waitUntilReady(base);
    const metrics = await text(`${base}/metrics`);
    expect(metrics).toMatch(/^flussonic_up\{server="demo"\} 1$/m);
    for (const [collector, on] of Object.entries(COLLECTOR_DEFAULTS)) {
      const ran = new RegExp(`^flussonic_exporter_collector_success\\{server="demo",collector="${collector}"\\} 1$`, 'm');
      if (on) expect(metrics, collector).toMatch(ran);
      else expect(metrics, collector).not.toMatch(new RegExp(`collector="${collector}"`));
    }
    // Core and default stream families, none of the optional ones.
    expect(metrics).toMatch(/^flussonic_stream_alive\{server="demo",/m);
    expect(metrics).toMatch(/^flussonic_stream_output_bandwidth_bytes_per_second\{server="demo",/m);
    const optional = CATALOGUE.filter((f) => f.tier === 'optional').map((f) => f.name);
    expect(optional.length).toBeGreaterThan(0);
    expect(optional.filter((name) => new RegExp(`^${name}(_bucket|_sum|_count)?\\{`, 'm').test(metrics))).toEqual([]);
    expect(metrics).toMatch(/^flussonic_catena_up\{catena="demo"\} 1$/m);
    exporter.child.kill('SIGTERM');
    expect((await exporter.exitWithin(5000)).code).toBe(0);
  }, 30_000);

  test('without --demo nothing simulated is served', async () => {
    const exporter = new ExporterProcess(['--config', goodConfig('real'), '--listen-address', '127.0.0.1:0']);
    const base = await exporter.baseUrl();
    await waitUntilReady(base);
    const metrics = await text(`${base}/metrics`);
    expect(metrics).toMatch(/^flussonic_up\{server="real"\} 0$/m);
    expect(metrics).toMatch(/^flussonic_exporter_demo 0$/m);
    // Apart from the demo gauge (0 here and its HELP), nothing mentions the demo.
    expect(metrics.replace(/^(# (HELP|TYPE) )?flussonic_exporter_demo\b.*$/gm, '')).not.toContain('demo');
    expect(exporter.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('DEMO MODE'))).toBe(false);
  });
});
