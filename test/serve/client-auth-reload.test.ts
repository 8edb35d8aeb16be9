/**
 * tls_server_config.client_auth_type and client_ca_file follow a reload of the web config: every
 * new connection gets the mode of the web config in force, in exporter-toolkit's (Go crypto/tls)
 * meaning, whichever mode the process started with and whichever it is reloaded to. What is
 * asserted is what clients get: whether the server asks for a certificate, and the answer to a
 * client without one, with one from client_ca_file, and with one from another CA.
 */
import { connect } from 'node:tls';
import { describe, expect, test } from 'vitest';
import type { ClientAuthType } from '../../src/serve/tls-options.js';
import { get, serve, type Served, webFixture } from '../helpers/web.js';

const { dir, running } = webFixture();
dir.clientCert('ca', 'client');
dir.clientCert('rogue-ca', 'rogue');

type Answer = number | 'refused';
interface Seen {
  /** The handshake carried a CertificateRequest. */
  readonly asks: boolean;
  readonly none: Answer;
  readonly good: Answer;
  readonly untrusted: Answer;
}

const EXPECTED: Readonly<Record<ClientAuthType, Seen>> = {
  NoClientCert: { asks: false, none: 200, good: 200, untrusted: 200 },
  RequestClientCert: { asks: true, none: 200, good: 200, untrusted: 200 },
  RequireAnyClientCert: { asks: true, none: 'refused', good: 200, untrusted: 200 },
  VerifyClientCertIfGiven: { asks: true, none: 200, good: 200, untrusted: 'refused' },
  RequireAndVerifyClientCert: { asks: true, none: 'refused', good: 200, untrusted: 'refused' },
};
const MODES = Object.keys(EXPECTED) as ClientAuthType[];

/** A web config in `mode`; client_ca_file (default ca.pem) with every mode that may have one. */
function webConfig(name: string, mode: ClientAuthType, clientCa = 'ca.pem'): string {
  const ca = mode === 'NoClientCert' ? '' : `  client_ca_file: ${clientCa}\n`;
  return dir.write(name, `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: ${mode}\n${ca}`);
}

async function start(file: string): Promise<Served> {
  const served = await serve({ webConfigFile: file });
  running.push(served);
  return served;
}

/** What a new connection of each kind of client gets now (`accepted`: a certificate the mode lets through). */
async function seen(served: Served, accepted = 'client'): Promise<Seen> {
  const ca = dir.read('server.pem');
  const answer = (cert?: string) =>
    get(`${served.base}/-/healthy`, { ca, ...(cert ? { cert: dir.read(`${cert}.pem`), key: dir.read(`${cert}.key`) } : {}) }).then(
      (r): Answer => r.status,
      (): Answer => 'refused',
    );
  return { asks: await asksForCertificate(served, accepted), none: await answer(), good: await answer('client'), untrusted: await answer('rogue') };
}

/**
 * Whether the server's handshake asks for a client certificate: a client shares signature
 * algorithms with the server only from its CertificateRequest. Probed with a certificate the
 * mode lets through, so the server never cuts the handshake short.
 */
function asksForCertificate(served: Served, cert: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port: served.listeners.addresses[0]!.port, ca: dir.read('server.pem'), cert: dir.read(`${cert}.pem`), key: dir.read(`${cert}.key`) },
      () => {
        const shared = socket.getSharedSigalgs();
        socket.destroy();
        resolve(shared.length > 0);
      },
    );
    socket.setTimeout(5000, () => socket.destroy(new Error('no handshake within 5 s')));
    socket.once('error', reject);
  });
}

describe('client_auth_type applies to new connections after a reload, in either direction', () => {
  test.each(MODES)('started with %s: reloaded to each other mode and back, each applies', async (first) => {
    const file = webConfig(`from-${first}.yml`, first);
    const served = await start(file);
    expect(await seen(served), `started with ${first}`).toEqual(EXPECTED[first]);
    for (const next of MODES.filter((m) => m !== first)) {
      webConfig(`from-${first}.yml`, next);
      expect(served.web.reload('SIGHUP'), `${first} -> ${next}`).toBe(true);
      expect(await seen(served), `${first} -> ${next}`).toEqual(EXPECTED[next]);
      webConfig(`from-${first}.yml`, first);
      expect(served.web.reload('SIGHUP'), `${next} -> ${first}`).toBe(true);
      expect(await seen(served), `${next} -> ${first}`).toEqual(EXPECTED[first]);
    }
  }, 60_000);

  test('a new client_ca_file applies together with a new mode', async () => {
    const file = webConfig('ca-change.yml', 'RequestClientCert');
    const served = await start(file);
    webConfig('ca-change.yml', 'RequireAndVerifyClientCert', 'rogue-ca.pem');
    expect(served.web.reload('SIGHUP')).toBe(true);
    expect(await seen(served, 'rogue')).toEqual({ asks: true, none: 'refused', good: 'refused', untrusted: 200 });
    webConfig('ca-change.yml', 'VerifyClientCertIfGiven', 'ca.pem');
    expect(served.web.reload('SIGHUP')).toBe(true);
    expect(await seen(served)).toEqual({ asks: true, none: 200, good: 200, untrusted: 'refused' });
  }, 30_000);

  test('the file watcher applies a new mode too', async () => {
    const file = webConfig('watched.yml', 'RequestClientCert');
    const served = await start(file);
    served.web.watch(20);
    const reloads = () => served.log.entries().filter((e) => e.msg === 'web config reloaded').length;
    webConfig('watched.yml', 'RequireAndVerifyClientCert');
    await until(() => reloads() > 0);
    expect(await seen(served)).toEqual(EXPECTED.RequireAndVerifyClientCert);
  }, 30_000);
});

test.each(['TLSv1.2', 'TLSv1.3'] as const)('%s: a session from before a reload to a stricter mode is not resumed past it', async (version) => {
  const file = webConfig(`resume-${version}.yml`, 'RequestClientCert');
  const served = await start(file);
  const before = await rawGet(served, version);
  expect(before).toMatchObject({ answer: 'HTTP/1.1 200 OK', reused: false });
  expect(before.session).toBeDefined();
  // Without a reload the session is resumed: the check below means something.
  expect(await rawGet(served, version, before.session)).toMatchObject({ answer: 'HTTP/1.1 200 OK', reused: true });

  webConfig(`resume-${version}.yml`, 'RequireAndVerifyClientCert');
  expect(served.web.reload('SIGHUP')).toBe(true);
  expect(await rawGet(served, version, before.session)).toMatchObject({ answer: 'refused', reused: false });
}, 30_000);

/**
 * GET /-/healthy over a TLS connection of `version` without a client certificate, offering
 * `session` to resume: the status line (or 'refused'), whether the session was resumed, and the
 * session to resume later.
 */
function rawGet(served: Served, version: 'TLSv1.2' | 'TLSv1.3', session?: Buffer): Promise<{ answer: string; reused: boolean; session?: Buffer }> {
  return new Promise((resolve) => {
    let text = '';
    let reused = false;
    let issued: Buffer | undefined;
    const socket = connect(
      { host: '127.0.0.1', port: served.listeners.addresses[0]!.port, ca: dir.read('server.pem'), minVersion: version, maxVersion: version, ...(session ? { session } : {}) },
      () => {
        reused = socket.isSessionReused();
        socket.write('GET /-/healthy HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      },
    );
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('session', (s: Buffer) => (issued = s));
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ answer: text.startsWith('HTTP/') ? text.split('\r\n')[0]! : 'refused', reused, ...(issued ? { session: issued } : {}) }));
  });
}

async function until(probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
