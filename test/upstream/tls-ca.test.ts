/**
 * `servers[].tls_ca_file`: a Flussonic server behind https with a certificate from a private CA is
 * reached when the config names that CA, and refused (as a connection error) when it does not.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { FlussonicClient } from '../../src/flussonic/client.js';
import { isUpstreamError } from '../../src/lib/errors.js';
import { configErrorOf } from '../config/config-files.js';
import { RecordedStats } from '../helpers/recorded-stats.js';
import { WebDir } from '../helpers/web.js';

const web = new WebDir();
let server: Server;
let url: string;

beforeAll(async () => {
  web.serverCert('flussonic');
  server = createServer({ cert: web.read('flussonic.pem'), key: web.read('flussonic.key') }, (_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  web.cleanup();
});

async function getStats(caLine: string): Promise<unknown> {
  const config = loadConfig(web.write('config.yaml', `servers:\n  - name: edge-1\n    url: ${url}\n${caLine}`, false), {});
  const client = new FlussonicClient({ config: config.servers[0]!, stats: new RecordedStats(), retryBackoffMs: 10 });
  try {
    return await client.getJson('/config/stats', '/config/stats', AbortSignal.timeout(5000));
  } finally {
    await client.destroy();
  }
}

describe('tls_ca_file', () => {
  test('with the CA that signed the server certificate, the https server is read', async () => {
    await expect(getStats('    tls_ca_file: flussonic.pem\n')).resolves.toEqual({ ok: true });
  });

  test('without it, the private CA is not trusted: a connection error', async () => {
    const error = await getStats('').catch((e: unknown) => e);
    expect(isUpstreamError(error) && error.reason).toBe('connection');
  });

  test('a file without a certificate is a config error naming the key', () => {
    web.write('not-a-ca.pem', 'hello\n', false);
    const error = configErrorOf(() => loadConfig(web.write('bad.yaml', `servers:\n  - name: a\n    url: ${url}\n    tls_ca_file: not-a-ca.pem\n`, false), {}));
    expect(error.problems).toEqual([expect.objectContaining({ path: 'servers[0].tls_ca_file', line: 4, message: expect.stringMatching(/not-a-ca\.pem holds no PEM certificate/) })]);
  });
});
