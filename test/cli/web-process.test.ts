/**
 * The web flags through the real `node dist/main.js`: --web.config.file with TLS and basic auth
 * on several --web.listen-address at once, SIGHUP re-reading the web config (a bad one keeps the
 * last good one), a bad web config stopping the start, and the demo listening on 127.0.0.1.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ConfigDir } from '../config/config-files.js';
import { basic, get, hash, WebDir } from '../helpers/web.js';
import { ensureBuilt, ExporterProcess, killAll, runToExit, type LogLine } from './exporter-process.js';

const dir = new ConfigDir();
const web = new WebDir();
web.serverCert('server');

beforeAll(() => ensureBuilt(), 120_000);
afterEach(() => killAll());
afterAll(() => {
  dir.cleanup();
  web.cleanup();
});

function config(): string {
  return dir.write('web.yaml', 'servers:\n  - name: edge\n    url: http://127.0.0.1:1\n');
}

/** Waits until `count` log lines match, bounded in time. */
async function lines(p: ExporterProcess, match: (l: LogLine) => boolean, count: number): Promise<LogLine[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = p.logs.filter(match);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`fewer than ${count} matching lines; stdout:\n${p.stdout}\nstderr:\n${p.stderr}`);
    // The next output (or 500 ms, in case it came between the check and now).
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 500);
      p.child.stdout!.once('data', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

describe('--web.config.file and --web.listen-address', () => {
  test('TLS and basic auth on two addresses; SIGHUP re-reads the web config and a bad one keeps the last good one', async () => {
    const file = web.write('process.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  scraper: ${hash('first-pw')}\n`);
    const p = new ExporterProcess(['--config', config(), '--web.config.file', file, '--web.listen-address', '127.0.0.1:0', '--listen-address', '127.0.0.1:0']);
    const listening = await lines(p, (l) => l.msg === 'listening', 2);
    const ca = web.read('server.pem');
    const urls = listening.map((l) => {
      expect(l.tls).toBe(true);
      return `https://127.0.0.1:${(l.address as { port: number }).port}/metrics`;
    });
    expect(new Set(urls).size).toBe(2);
    for (const url of urls) {
      expect((await get(url, { ca, authorization: basic('scraper', 'first-pw') })).status).toBe(200);
      expect((await get(url, { ca, authorization: basic('scraper', 'nope') })).status).toBe(401);
    }

    // A bad file, then SIGHUP: logged with the path and the reason; the old users stay.
    web.write('process.yml', 'basic_auth_users:\n  scraper: not-a-hash\n', false);
    p.child.kill('SIGHUP');
    const [bad] = await lines(p, (l) => l.trigger === 'SIGHUP', 1);
    expect(bad!.msg).toBe('the web config is invalid; the previous one stays in force');
    expect(bad!.webConfigFile).toBe(file);
    expect(JSON.stringify(bad!.problems)).toContain('not a bcrypt hash');
    expect((await get(urls[0]!, { ca, authorization: basic('scraper', 'first-pw') })).status).toBe(200);

    // A good one: in force without a restart.
    web.write('process.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  scraper: ${hash('second-pw')}\n`);
    p.child.kill('SIGHUP');
    await lines(p, (l) => l.trigger === 'SIGHUP' && l.msg === 'web config reloaded', 1);
    for (const url of urls) {
      expect((await get(url, { ca, authorization: basic('scraper', 'second-pw') })).status).toBe(200);
      expect((await get(url, { ca, authorization: basic('scraper', 'first-pw') })).status).toBe(401);
    }
    expect(p.stdout).not.toContain('first-pw');
    expect(p.stdout).not.toContain('second-pw');
    p.child.kill('SIGTERM');
    expect((await p.exitWithin(5000)).code).toBe(0);
  }, 30_000);

  test('a bad web config stops the start: exit 2 naming the file and the problem', async () => {
    const file = web.write('start-bad.yml', 'tls_server_config:\n  cert_file: server.pem\n', false);
    const result = await runToExit(['--config', config(), '--web.config.file', file, '--web.listen-address', '127.0.0.1:0']);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n').slice(0, 2)).toEqual([`flussonic-exporter: invalid web config ${file}: 1 problem`, '  tls_server_config: key_file is missing (TLS needs cert_file and key_file)']);
    const check = await runToExit(['--check-config', '--config', config(), '--web.config.file', file]);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain(`invalid web config ${file}`);
  });
});

test('the demo listens on 127.0.0.1:9228 unless told otherwise', async () => {
  const p = new ExporterProcess(['--demo']);
  // Another process may hold 9228 on this machine: then the refusal names the address it tried.
  const outcome = await Promise.race([p.waitForLog((l) => l.msg === 'listening').then((l) => ({ listening: l })), p.exited.then((exit) => ({ exit }))]);
  if ('listening' in outcome) {
    expect(outcome.listening.address).toMatchObject({ address: '127.0.0.1', port: 9228 });
    p.child.kill('SIGTERM');
    expect((await p.exitWithin(5000)).code).toBe(0);
  } else {
    expect(outcome.exit.code).toBe(1);
    expect(p.stderr).toMatch(/^flussonic-exporter: cannot listen on 127\.0\.0\.1:9228: /);
  }
}, 30_000);
