/**
 * A reload never weakens the running web config: a half-written file (empty, or cut right after
 * `basic_auth_users:`) that would turn basic auth or TLS off is refused like a bad one, the last
 * good config stays, an error is logged, and the outcome is reported as a failure; so is a good
 * file the listeners cannot apply. The log of a reload tells the TLS the listeners really serve.
 */
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { describe, expect, test } from 'vitest';
import { basic, get, hash, serve, type Served, webFixture } from '../helpers/web.js';

const USER = 'prometheus';
const PASSWORD = 'scrape-secret-4711';
const REFUSED = 'the web config would turn off TLS or basic auth; the previous one stays in force (a restart applies it)';
const { dir, running } = webFixture();

async function start(file: string): Promise<Served & { outcomes: boolean[] }> {
  const served = await serve({ webConfigFile: file });
  running.push(served);
  const outcomes: boolean[] = [];
  served.web.onReloadOutcome((ok) => outcomes.push(ok));
  return Object.assign(served, { outcomes });
}

describe('basic auth survives a half-written file', () => {
  const full = () => `basic_auth_users:\n  ${USER}: ${hash(PASSWORD)}\n`;
  test.each([
    ['cut right after basic_auth_users:', 'basic_auth_users:\n'],
    ['empty', ''],
    ['only a comment', '# being rewritten\n'],
    ['other sections, no users', 'http_server_config:\n  headers:\n    X-Frame-Options: deny\n'],
  ])('%s: refused, logged, the users stay, 401 still answered', async (_name, text) => {
    const file = dir.write(`auth-${_name.replace(/\W+/g, '-')}.yml`, full());
    const served = await start(file);
    expect((await get(`${served.base}/metrics`)).status).toBe(401);

    dir.write(`auth-${_name.replace(/\W+/g, '-')}.yml`, text, false);
    expect(served.web.reload('SIGHUP')).toBe(false);
    expect(served.outcomes).toEqual([false]);
    const refused = served.log.entries().find((e) => e.msg === REFUSED);
    expect(refused).toMatchObject({ webConfigFile: file, trigger: 'SIGHUP' });
    expect(JSON.stringify(refused!.problems)).toContain('basic_auth_users: no users, which would turn basic auth off');
    expect(served.web.current.users.size).toBe(1);
    expect((await get(`${served.base}/metrics`)).status).toBe(401);
    expect((await get(`${served.base}/metrics`, { authorization: basic(USER, PASSWORD) })).status).toBe(200);
    expect(served.log.text()).not.toContain(USER);
  });

  test('the file watcher refuses it too; the good file written after it applies', async () => {
    const file = dir.write('watched.yml', full());
    const served = await start(file);
    served.web.watch(20);
    dir.write('watched.yml', 'basic_auth_users:\n', false);
    await until(() => served.outcomes.length >= 1);
    expect(served.outcomes).toEqual([false]);
    expect((await get(`${served.base}/metrics`)).status).toBe(401);

    dir.write('watched.yml', `basic_auth_users:\n  ${USER}: ${hash('new-password')}\n`);
    await until(() => served.outcomes.length >= 2);
    expect(served.outcomes).toEqual([false, true]);
    expect((await get(`${served.base}/metrics`, { authorization: basic(USER, 'new-password') })).status).toBe(200);
  }, 20_000);
});

describe('TLS survives a half-written file, and the log says what is served', () => {
  test('an empty file on a TLS listener is refused: TLS and users stay, the log never says tls: false', async () => {
    const file = dir.write('tls.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  ${USER}: ${hash(PASSWORD)}\n`);
    const served = await start(file);
    const ca = dir.read('server.pem');
    dir.write('tls.yml', '', false);
    expect(served.web.reload('SIGHUP')).toBe(false);
    const refused = served.log.entries().find((e) => e.msg === REFUSED);
    expect(JSON.stringify(refused!.problems)).toContain('tls_server_config: missing, which would turn TLS off');
    expect(served.web.current.tls).toBeDefined();
    expect((await get(`${served.base}/metrics`, { ca })).status).toBe(401);
    expect((await get(`${served.base}/metrics`, { ca, authorization: basic(USER, PASSWORD) })).status).toBe(200);
    expect(served.log.entries().filter((e) => e.tls === false)).toEqual([]);
  });

  test('a file keeping TLS and adding users applies at once', async () => {
    const file = dir.write('tls-only.yml', 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n');
    const served = await start(file);
    dir.write('tls-only.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  ${USER}: ${hash(PASSWORD)}\n`);
    expect(served.web.reload('SIGHUP')).toBe(true);
    expect(served.log.entries().find((e) => e.msg === 'web config reloaded')).toMatchObject({ tls: true, users: 1 });
    expect((await get(`${served.base}/metrics`, { ca: dir.read('server.pem') })).status).toBe(401);
  });

  test('tls_server_config added to a plain-HTTP process: users apply now, TLS after a restart, and the log says tls: false', async () => {
    const file = dir.write('plain.yml', '');
    const served = await start(file);
    dir.write('plain.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  ${USER}: ${hash(PASSWORD)}\n`);
    expect(served.web.reload('SIGHUP')).toBe(true);
    expect(served.log.entries().find((e) => e.msg === 'tls_server_config takes effect after a restart; the listeners keep serving plain HTTP')).toBeDefined();
    expect(served.log.entries().find((e) => e.msg === 'web config reloaded')).toMatchObject({ tls: false, users: 1 });
    expect(served.web.current.tls).toBeUndefined();
    expect((await get(`${served.base}/metrics`)).status).toBe(401);
    expect((await get(`${served.base}/metrics`, { authorization: basic(USER, PASSWORD) })).status).toBe(200);
  });
});

describe('a reload the listeners cannot apply is a failure', () => {
  test('logged, reported as failed, and the previous config stays in force, certificate included', async () => {
    dir.serverCert('rotated');
    const file = dir.write('apply.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  ${USER}: ${hash(PASSWORD)}\n`);
    const served = await start(file);
    // After the listeners' own, as a second server would: the listeners have taken the new one.
    served.web.onChange((next) => {
      if (next.users.has('second')) throw new Error('cannot take this one');
    });
    dir.write('apply.yml', `tls_server_config:\n  cert_file: rotated.pem\n  key_file: rotated.key\nbasic_auth_users:\n  ${USER}: ${hash(PASSWORD)}\n  second: ${hash(PASSWORD)}\n`);
    expect(served.web.reload('SIGHUP')).toBe(false);
    expect(served.outcomes).toEqual([false]);
    const failed = served.log.entries().find((e) => e.msg === 'the web config cannot be applied; the previous one stays in force');
    expect(failed).toMatchObject({ webConfigFile: file, trigger: 'SIGHUP', problems: ['cannot take this one'] });
    expect(served.log.entries().find((e) => e.msg === 'web config reloaded')).toBeUndefined();
    expect([...served.web.current.users.keys()]).toEqual([USER]);
    const ca = dir.read('server.pem');
    expect(await servedFingerprint(served)).toBe(new X509Certificate(ca).fingerprint256);
    expect((await get(`${served.base}/metrics`, { ca, authorization: basic(USER, PASSWORD) })).status).toBe(200);
    expect((await get(`${served.base}/metrics`, { ca, authorization: basic('second', PASSWORD) })).status).toBe(401);
  });
});

/** The fingerprint of the certificate a new TLS connection is shown. */
function servedFingerprint(served: Served): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: served.listeners.addresses[0]!.port, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.destroy();
      if (cert) resolve(cert.fingerprint256);
      else reject(new Error('no certificate'));
    });
    socket.once('error', reject);
  });
}

async function until(probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
