/**
 * The web config's reload through the real `node dist/main.js`: a half-written file on SIGHUP is
 * refused, basic auth stays on and flussonic_exporter_web_config_last_reload_success says 0; the
 * listeners' dropped connections are exported; and --web.config.check checks a web config alone.
 */
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { ConfigDir } from '../config/config-files.js';
import { basic, get, hash, WebDir } from '../helpers/web.js';
import { ensureBuilt, ExporterProcess, killAll, runToExit } from './exporter-process.js';

const dir = new ConfigDir();
const web = new WebDir();

beforeAll(() => ensureBuilt(), 120_000);
afterEach(() => killAll());
afterAll(() => {
  dir.cleanup();
  web.cleanup();
});

const REFUSED = 'the web config would turn off TLS or basic auth; the previous one stays in force (a restart applies it)';

test('SIGHUP with a web config cut after basic_auth_users: is refused; auth stays on and the reload gauge says 0', async () => {
  const config = dir.write('web.yaml', 'servers:\n  - name: edge\n    url: http://127.0.0.1:1\n');
  const file = web.write('auth.yml', `basic_auth_users:\n  scraper: ${hash('scrape-pw')}\n`);
  const p = new ExporterProcess(['--config', config, '--web.config.file', file, '--web.listen-address', '127.0.0.1:0']);
  const url = `${await p.baseUrl()}/metrics`;
  const scraper = basic('scraper', 'scrape-pw');
  const before = await get(url, { authorization: scraper });
  expect(before.status).toBe(200);
  expect(before.body).toMatch(/^flussonic_exporter_web_config_last_reload_success 1$/m);
  expect(before.body).toMatch(/^flussonic_exporter_web_config_last_reload_success_timestamp_seconds \d/m);
  expect(before.body).toMatch(/^flussonic_exporter_http_connections_dropped_total\{reason="replaced"\} 0$/m);

  web.write('auth.yml', 'basic_auth_users:\n', false);
  p.child.kill('SIGHUP');
  const refused = await p.waitForLog((l) => l.msg === REFUSED);
  expect(refused).toMatchObject({ webConfigFile: file, trigger: 'SIGHUP' });
  expect((await get(url)).status).toBe(401);
  const after = await get(url, { authorization: scraper });
  expect(after.status).toBe(200);
  expect(after.body).toMatch(/^flussonic_exporter_web_config_last_reload_success 0$/m);
  p.child.kill('SIGTERM');
  expect((await p.exitWithin(5000)).code).toBe(0);
}, 30_000);

test('--web.config.check FILE checks a web config alone: 0 and a summary, or 2 and every problem', async () => {
  const good = web.write('check-good.yml', `basic_auth_users:\n  a: ${hash('x')}\n  b: ${hash('y')}\n`);
  const ok = await runToExit(['--web.config.check', good]);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toBe(`${good}: valid (tls: off, basic auth users: 2)\n`);

  const bad = web.write('check-bad.yml', 'tls_server_config:\n  cert_file: nope.pem\nbasic_auth_users:\n  a: plain\n', false);
  const refused = await runToExit(['--web.config.check', bad]);
  expect(refused.code).toBe(2);
  expect(refused.stderr.split('\n')[0]).toBe(`flussonic-exporter: invalid web config ${bad}: 2 problems`);
  expect(refused.stderr).toContain('key_file is missing');
  expect(refused.stderr).toContain('basic_auth_users (user 1): not a bcrypt hash');
}, 30_000);
