/**
 * The web config file as exporter-toolkit reads it: what a valid file gives, every kind of bad
 * file refused with the file's path and the key and problem, and the bcrypt check cache.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { BasicAuthChecker, parseBasicAuth } from '../../src/serve/basic-auth.js';
import { clientAuthPolicy } from '../../src/serve/tls-options.js';
import { loadWebConfig, WebConfigError } from '../../src/serve/web-config.js';
import { findBinary, promtool } from '../helpers/promtool.js';
import { hash, WebDir } from '../helpers/web.js';

const dir = new WebDir();
dir.serverCert('server');
dir.serverCert('other');
afterAll(() => dir.cleanup());

describe('a valid file', () => {
  test('an empty file is plain HTTP without auth, as in exporter-toolkit', () => {
    const config = loadWebConfig(dir.write('empty.yml', '# nothing\n'));
    expect(config.tls).toBeUndefined();
    expect(config.users.size).toBe(0);
    expect(config.http2).toBe(true);
  });

  test("Go's names become Node's: versions, cipher suites, curves, client auth", () => {
    const config = loadWebConfig(
      dir.write(
        'full.yml',
        [
          'tls_server_config:',
          '  cert_file: server.pem',
          '  key_file: server.key',
          '  min_version: TLS12',
          '  max_version: TLS12',
          '  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256]',
          '  curve_preferences: [X25519, CurveP256]',
          '  prefer_server_cipher_suites: false',
          '  client_auth_type: RequireClientCert',
          'http_server_config:',
          '  http2: false',
          '  headers: {Strict-Transport-Security: max-age=31536000}',
          `basic_auth_users: {alice: '${hash('a')}'}`,
          '',
        ].join('\n'),
      ),
    );
    expect(config.tls).toMatchObject({
      certFile: dir.path('server.pem'),
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.2',
      ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305',
      ecdhCurve: 'X25519:P-256',
      honorCipherOrder: false,
      // exporter-toolkit's old name of RequireAnyClientCert.
      clientAuth: 'RequireAnyClientCert',
    });
    // Applied to each connection by the listeners, never part of the secure context.
    expect(config.tls!.secureOptions).not.toHaveProperty('requestCert');
    expect(clientAuthPolicy(config.tls!.clientAuth)).toMatchObject({ requestCert: true, rejectUnauthorized: false });
    expect(config.headers).toEqual({ 'Strict-Transport-Security': 'max-age=31536000' });
    expect(config.http2).toBe(false);
    expect([...config.users.keys()]).toEqual(['alice']);
    expect(config.files).toEqual([dir.path('full.yml'), dir.path('server.pem'), dir.path('server.key')]);
  });
});

describe('a bad file is refused with its path, the key and the problem', () => {
  const HASH = hash('pw');
  const TLS = 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n';
  const cases: [string, string, RegExp][] = [
    ['unknown key', 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  certfile: x\n', /tls_server_config\.certfile: unknown key/],
    ['newer toolkit key', 'rate_limit: {burst: 1, interval: 1s}\n', /rate_limit: a newer exporter-toolkit option this exporter does not support/],
    ['inline cert', 'tls_server_config: {cert: x, key: y}\n', /tls_server_config\.cert: .*does not support \(use cert_file\)/],
    ['key_file missing', 'tls_server_config: {cert_file: server.pem}\n', /tls_server_config: key_file is missing/],
    ['unreadable cert', 'tls_server_config: {cert_file: nope.pem, key_file: server.key}\n', /tls_server_config\.cert_file: cannot read .*nope\.pem: no such file/],
    ['key of another cert', 'tls_server_config: {cert_file: server.pem, key_file: other.key}\n', /tls_server_config: the certificate, key or settings cannot be used: .*key values mismatch/],
    ['client CA without client auth', `${TLS}  client_ca_file: server.pem\n`, /client_ca_file: set without client_auth_type/],
    ['unknown client auth', `${TLS}  client_auth_type: Maybe\n`, /client_auth_type: unknown client_auth_type "Maybe"/],
    ['unknown cipher', `${TLS}  cipher_suites: [ECDHE-RSA-AES128-GCM-SHA256]\n`, /cipher_suites: unknown cipher suite "ECDHE-RSA-AES128-GCM-SHA256": expected Go's names/],
    ['insecure cipher', `${TLS}  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n`, /TLS_RSA_WITH_RC4_128_SHA is an insecure cipher suite/],
    ['unknown version', `${TLS}  min_version: TLS14\n`, /min_version: unknown TLS version "TLS14"/],
    ['TLS 1.0', `${TLS}  min_version: TLS10\n`, /min_version: TLS10 cannot be served by Node.js \(OpenSSL 3 refuses TLS 1.0 and 1.1 handshakes\); use TLS12 or TLS13/],
    ['min above max', `${TLS}  min_version: TLS13\n  max_version: TLS12\n`, /min_version is above max_version/],
    ['unknown curve', `${TLS}  curve_preferences: [P256]\n`, /curve_preferences: unknown curve "P256"/],
    ['header not allowed', 'http_server_config:\n  headers: {Server: x}\n', /headers\.Server: this header cannot be configured/],
    ['header value', 'http_server_config:\n  headers: {X-Frame-Options: allow}\n', /X-Frame-Options: expected one of deny, sameorigin, got "allow"/],
    ['http2 not a bool', 'http_server_config: {http2: yes please}\n', /http2: expected true or false/],
    ['plain password', 'basic_auth_users:\n  alice: secret-in-clear\n', /basic_auth_users \(user 1\): not a bcrypt hash/],
    ['users not a mapping', `basic_auth_users: ['${HASH}']\n`, /basic_auth_users: expected a mapping/],
    ['duplicate key', `basic_auth_users:\n  a: '${HASH}'\n  a: '${HASH}'\n`, /YAML: .*(unique|duplicate)/i],
    ['not YAML', 'tls_server_config: [\n', /YAML: /],
    ['not a mapping', '- a\n', /the file: expected a mapping/],
  ];
  test.each(cases)('%s', (_name, text, problem) => {
    const file = dir.write(`bad-${_name.replace(/\W+/g, '-')}.yml`, text, false);
    let error: unknown;
    try {
      loadWebConfig(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WebConfigError);
    const message = (error as WebConfigError).message;
    expect(message).toContain(`invalid web config ${file}: `);
    expect(message).toMatch(problem);
    // Secrets of the file never reach the message.
    expect(message).not.toContain('secret-in-clear');
    expect(message).not.toContain(HASH);
    expect(message).not.toContain('alice');
  });

  test('a missing file and one over the size cap', () => {
    expect(() => loadWebConfig(dir.path('absent.yml'))).toThrow(/invalid web config .*absent\.yml: cannot read .*absent\.yml: no such file/);
    const big = dir.write('big.yml', `# ${'x'.repeat(1024 * 1024)}\n`, false);
    expect(() => loadWebConfig(big)).toThrow(/big\.yml: \d+ bytes, over the 1048576-byte limit/);
  });
});

describe('basic auth checks', () => {
  test('a repeated check is served from the cache; a new password, user or hash pays bcrypt', async () => {
    const checker = new BasicAuthChecker();
    const users = new Map([['alice', hash('right')]]);
    for (let i = 0; i < 5; i++) expect(await checker.check(users, { user: 'alice', password: 'right' })).toBe(true);
    expect(checker.bcryptCount).toBe(1);
    expect(await checker.check(users, { user: 'alice', password: 'wrong' })).toBe(false);
    expect(await checker.check(users, { user: 'alice', password: 'wrong' })).toBe(false);
    expect(checker.bcryptCount).toBe(2);
    // An unknown user costs a bcrypt comparison too (no user enumeration by timing).
    expect(await checker.check(users, { user: 'mallory', password: 'right' })).toBe(false);
    expect(checker.bcryptCount).toBe(3);
    // A reloaded file with a new hash for the same password is checked again.
    const reloaded = new Map([['alice', hash('right')]]);
    expect(await checker.check(reloaded, { user: 'alice', password: 'right' })).toBe(true);
    expect(checker.bcryptCount).toBe(4);
  });

  test('concurrent checks run bcrypt one at a time and all get their answer', async () => {
    const checker = new BasicAuthChecker();
    const users = new Map([['bob', hash('pw')]]);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => checker.check(users, { user: 'bob', password: i % 2 === 0 ? 'pw' : `no${i}` })));
    expect(results).toEqual([true, false, true, false, true, false]);
  });

  test('the Authorization header is read as RFC 7617 says', () => {
    expect(parseBasicAuth(`Basic ${Buffer.from('u:p:with:colons').toString('base64')}`)).toEqual({ user: 'u', password: 'p:with:colons' });
    expect(parseBasicAuth('basic dTo=')).toEqual({ user: 'u', password: '' });
    expect(parseBasicAuth('Basic !!!')).toBeUndefined();
    expect(parseBasicAuth(`Basic ${Buffer.from('no-colon').toString('base64')}`)).toBeUndefined();
    expect(parseBasicAuth(undefined)).toBeUndefined();
  });
});

test('promtool check web-config accepts the valid files of these tests', () => {
  const tool = findBinary('promtool');
  if (!tool) return;
  dir.validTexts.forEach((text, i) => {
    const r = promtool(tool, ['check', 'web-config', dir.write(`promtool-${i}.yml`, text, false)]);
    expect(r.status, `${text}\n${r.stdout}${r.stderr}`).toBe(0);
  });
});
