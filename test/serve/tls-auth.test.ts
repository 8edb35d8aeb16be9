/**
 * /metrics protected by TLS and basic auth through --web.config.file (exporter-toolkit format).
 * Real clients (undici, curl) over self-signed certificates made here with openssl; client
 * certificate auth; certificate and web config reloads without a restart; and `promtool check
 * web-config` on every web config file these tests use.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { findBinary, promtool } from '../helpers/promtool.js';
import { basic, get, hash, serve, WebDir, type Served } from '../helpers/web.js';

const USER = 'prometheus';
const PASSWORD = 'scrape-secret-4711';
const dir = new WebDir();
dir.serverCert('server');
dir.serverCert('rotated');
dir.clientCert('ca', 'client');
dir.clientCert('rogue-ca', 'rogue');
const running: Served[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
afterAll(() => dir.cleanup());

async function start(webConfig: string, watchMs?: number): Promise<Served> {
  const served = await serve({ webConfigFile: webConfig });
  running.push(served);
  if (watchMs) served.web.watch(watchMs);
  return served;
}

/** The certificate a fresh TLS connection is shown (its fingerprint). */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.destroy();
      if (cert) resolve(cert.fingerprint256);
      else reject(new Error('no certificate'));
    });
    socket.once('error', reject);
  });
}

const fingerprint = (name: string) => new X509Certificate(dir.read(`${name}.pem`)).fingerprint256;

describe('TLS and basic auth', () => {
  const config = () =>
    dir.write(
      'tls-auth.yml',
      `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  min_version: TLS12\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\nbasic_auth_users:\n  ${USER}: ${hash(PASSWORD)}\n  other: ${hash('other-password')}\n`,
    );

  test('/metrics over HTTPS needs the right user and password; a 401 never says which half was wrong', async () => {
    const served = await start(config());
    expect(served.listeners.tls).toBe(true);
    const ca = dir.read('server.pem');
    const url = `${served.base}/metrics`;

    const ok = await get(url, { ca, authorization: basic(USER, PASSWORD) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatch(/^flussonic_exporter_build_info\{/m);
    expect(ok.headers['x-frame-options']).toBe('deny');
    expect(ok.headers['x-content-type-options']).toBe('nosniff');

    const refusals = [
      await get(url, { ca }),
      await get(url, { ca, authorization: basic(USER, 'wrong') }),
      await get(url, { ca, authorization: basic('nobody', PASSWORD) }),
      await get(url, { ca, authorization: basic('other', PASSWORD) }),
      await get(url, { ca, authorization: 'Bearer x' }),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe('Basic');
      expect(r.body).toBe('Unauthorized\n');
    }
    // The landing page and the health endpoints are behind the same door, as in exporter-toolkit.
    expect((await get(`${served.base}/`, { ca })).status).toBe(401);
    expect((await get(`${served.base}/-/healthy`, { ca, authorization: basic(USER, PASSWORD) })).status).toBe(200);
    // Without trusting the self-signed certificate the client refuses to talk.
    await expect(get(url, { authorization: basic(USER, PASSWORD) })).rejects.toThrow(/self-signed|certificate/i);
    // Plain HTTP on the TLS port gets Go's 400, never the metrics.
    expect((await get(url.replace('https:', 'http:'), { authorization: basic(USER, PASSWORD) })).status).toBe(400);
    const logs = served.log.text();
    expect(logs).not.toContain(PASSWORD);
    expect(logs).not.toContain(USER);
  });

  test('curl with --cacert and -u gets the metrics; without -u it gets 401', async () => {
    const curl = findBinary('curl');
    if (!curl) return;
    const served = await start(config());
    const args = ['-sS', '--max-time', '10', '--cacert', dir.path('server.pem'), '-o', '/dev/null', '-w', '%{http_code}', `${served.base}/metrics`];
    // Asynchronously: the server runs in this process, a blocking spawn would starve it.
    const call = (extra: string[]) =>
      new Promise<string>((resolve) => {
        execFile(curl, [...extra, ...args], { timeout: 15_000 }, (_error, stdout) => resolve(String(stdout)));
      });
    expect(await call(['-u', `${USER}:${PASSWORD}`])).toBe('200');
    expect(await call([])).toBe('401');
  });

  test('RequireAndVerifyClientCert: only a client certificate from client_ca_file gets through', async () => {
    const served = await start(
      dir.write('client-auth.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n`),
    );
    const ca = dir.read('server.pem');
    const ok = await get(`${served.base}/metrics`, { ca, cert: dir.read('client.pem'), key: dir.read('client.key') });
    expect(ok.status).toBe(200);
    await expect(get(`${served.base}/metrics`, { ca })).rejects.toThrow();
    await expect(get(`${served.base}/metrics`, { ca, cert: dir.read('rogue.pem'), key: dir.read('rogue.key') })).rejects.toThrow();
  });

  test('RequireAnyClientCert wants a certificate, VerifyClientCertIfGiven checks one when given', async () => {
    const ca = dir.read('server.pem');
    const any = await start(dir.write('any-cert.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: RequireAnyClientCert\n`));
    expect((await get(`${any.base}/metrics`, { ca, cert: dir.read('rogue.pem'), key: dir.read('rogue.key') })).status).toBe(200);
    await expect(get(`${any.base}/metrics`, { ca })).rejects.toThrow();

    const ifGiven = await start(
      dir.write('if-given.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n`),
    );
    expect((await get(`${ifGiven.base}/metrics`, { ca })).status).toBe(200);
    expect((await get(`${ifGiven.base}/metrics`, { ca, cert: dir.read('client.pem'), key: dir.read('client.key') })).status).toBe(200);
    await expect(get(`${ifGiven.base}/metrics`, { ca, cert: dir.read('rogue.pem'), key: dir.read('rogue.key') })).rejects.toThrow();
  });
});

test("cipher_suites, min_version and max_version in Go's names are what the handshake gets", async () => {
  const served = await start(
    dir.write('ciphers.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n`),
  );
  const handshake = (options: { maxVersion?: 'TLSv1.2' | 'TLSv1.3'; minVersion?: 'TLSv1.3'; ciphers?: string }) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: served.listeners.addresses[0]!.port, ca: dir.read('server.pem'), servername: 'localhost', ...options }, () => {
        const result = `${socket.getProtocol()} ${socket.getCipher().name}`;
        socket.destroy();
        resolve(result);
      });
      socket.once('error', reject);
    });
  expect(await handshake({})).toBe('TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384');
  await expect(handshake({ minVersion: 'TLSv1.3' })).rejects.toThrow();
  await expect(handshake({ ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' })).rejects.toThrow();
});

describe('reloads without a restart', () => {
  test('a new certificate is served to new connections; a bad file keeps the last good one and says why', async () => {
    const file = dir.write('reload.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  ${USER}: ${hash(PASSWORD)}\n`);
    const served = await start(file, 20);
    const port = served.listeners.addresses[0]!.port;
    expect(await servedFingerprint(port)).toBe(fingerprint('server'));

    const reloaded = () => served.log.entries().filter((e) => e.msg === 'web config reloaded').length;
    const before = reloaded();
    dir.write('reload.yml', `tls_server_config:\n  cert_file: rotated.pem\n  key_file: rotated.key\nbasic_auth_users:\n  ${USER}: ${hash('new-password')}\n`);
    await until(() => reloaded() > before);
    expect(await servedFingerprint(port)).toBe(fingerprint('rotated'));
    const ca = dir.read('rotated.pem');
    expect((await get(`${served.base}/metrics`, { ca, authorization: basic(USER, 'new-password') })).status).toBe(200);
    expect((await get(`${served.base}/metrics`, { ca, authorization: basic(USER, PASSWORD) })).status).toBe(401);

    // A bad file: logged with its path and the problem; the last good config stays in force.
    dir.write('reload.yml', `tls_server_config:\n  cert_file: missing.pem\n  key_file: rotated.key\nbasic_auth_users:\n  ${USER}: plain-text\n`, false);
    const failed = await until(() => served.log.entries().find((e) => e.msg === 'the web config is invalid; the previous one stays in force'));
    expect(failed.webConfigFile).toBe(file);
    expect(JSON.stringify(failed.problems)).toContain(`cannot read ${dir.path('missing.pem')}: no such file`);
    expect(JSON.stringify(failed.problems)).toContain('basic_auth_users (user 1): not a bcrypt hash');
    expect(served.log.text()).not.toContain('plain-text');
    expect(await servedFingerprint(port)).toBe(fingerprint('rotated'));
    expect((await get(`${served.base}/metrics`, { ca, authorization: basic(USER, 'new-password') })).status).toBe(200);

    // SIGHUP's path (main.ts calls reload('SIGHUP')) re-reads too.
    dir.write('reload.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  ${USER}: ${hash('third-password')}\n`);
    served.web.close();
    expect(served.web.reload('SIGHUP')).toBe(true);
    expect(await servedFingerprint(port)).toBe(fingerprint('server'));
    expect((await get(`${served.base}/metrics`, { ca: dir.read('server.pem'), authorization: basic(USER, 'third-password') })).status).toBe(200);
  }, 40_000);

  test('a certificate and its key rewritten one after the other are reloaded once, together', async () => {
    dir.write('live.pem', dir.read('server.pem'), false);
    dir.write('live.key', dir.read('server.key'), false);
    const file = dir.write('live.yml', 'tls_server_config:\n  cert_file: live.pem\n  key_file: live.key\n');
    const served = await start(file, 100);
    const port = served.listeners.addresses[0]!.port;
    expect(await servedFingerprint(port)).toBe(fingerprint('server'));
    const reloads = () => served.log.entries().filter((e) => e.msg === 'web config reloaded').length;
    const invalid = () => served.log.entries().filter((e) => e.msg === 'the web config is invalid; the previous one stays in force');
    // As a renewal hook copies them: the certificate, then a moment later its key.
    dir.write('live.pem', dir.read('rotated.pem'), false);
    await new Promise((resolve) => setTimeout(resolve, 30));
    dir.write('live.key', dir.read('rotated.key'), false);
    await until(() => reloads() > 0);
    expect(await servedFingerprint(port)).toBe(fingerprint('rotated'));
    // A few more polls: no second reload, and no attempt with the new certificate and the old key.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(reloads()).toBe(1);
    expect(invalid()).toEqual([]);
  }, 20_000);
});

test('promtool check web-config accepts every valid web config file of these tests', () => {
  const tool = findBinary('promtool');
  if (!tool) return;
  expect(dir.validTexts.length).toBeGreaterThanOrEqual(5);
  dir.validTexts.forEach((text, i) => {
    // Beside the certificates: the files name them by relative paths.
    const file = dir.write(`promtool-${i}.yml`, text, false);
    const r = promtool(tool, ['check', 'web-config', file]);
    expect(r.status, `${text}\n${r.stdout}${r.stderr}`).toBe(0);
  });
});

/** The first truthy value of `probe`, polled every 10 ms for at most 10 s (CI machines are loaded). */
async function until<T>(probe: () => T | undefined | false): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
