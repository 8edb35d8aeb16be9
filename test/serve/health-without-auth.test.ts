/**
 * Kubelet probes cannot send the web config's passwords: with --web.health-without-auth the
 * health endpoints answer without them, over TLS too (kubelet's HTTPS probes skip certificate
 * checks), and every other path keeps asking. Without the flag nothing changes.
 */
import { describe, expect, it } from 'vitest';
import { parseCli } from '../../src/cli.js';
import { basic, get, hash, serve, type Served, webFixture } from '../helpers/web.js';

const { dir, running } = webFixture();

const webConfig = () => dir.write('tls-auth.yml', `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  prometheus: ${hash('secret-4711')}\n`);

async function start(healthWithoutAuth: boolean): Promise<Served> {
  const served = await serve({ webConfigFile: webConfig(), healthWithoutAuth });
  running.push(served);
  return served;
}

describe('--web.health-without-auth', () => {
  it('serves /-/healthy and /-/ready without credentials over TLS; the rest still needs them', async () => {
    const served = await start(true);
    const ca = dir.read('server.pem');
    expect(served.base.startsWith('https://')).toBe(true);
    expect((await get(`${served.base}/-/healthy`, { ca })).status).toBe(200);
    expect((await get(`${served.base}/-/ready`, { ca })).status).toBe(200);
    expect((await get(`${served.base}/-/ready/`, { ca })).status).toBe(200);
    for (const path of ['/metrics', '/', '/nowhere']) expect((await get(`${served.base}${path}`, { ca })).status).toBe(401);
    expect((await get(`${served.base}/metrics`, { ca, authorization: basic('prometheus', 'secret-4711') })).status).toBe(200);
  });

  it('keeps auth on the health endpoints without the flag', async () => {
    const served = await start(false);
    const ca = dir.read('server.pem');
    expect((await get(`${served.base}/-/healthy`, { ca })).status).toBe(401);
    expect((await get(`${served.base}/-/ready`, { ca })).status).toBe(401);
  });

  it('is a flag of a run', () => {
    const command = parseCli(['--config', 'x.yaml', '--web.health-without-auth'], {});
    expect(command.kind === 'run' && command.web.healthWithoutAuth).toBe(true);
    const plain = parseCli(['--config', 'x.yaml'], {});
    expect(plain.kind === 'run' && plain.web.healthWithoutAuth).toBeFalsy();
  });
});
