/**
 * A URL fastify's router cannot take (a malformed percent-encoding such as `/%` or `/metrics%zz`,
 * a route parameter over fastify's length limit) goes through the same guards as a path of no
 * route (extra headers, basic auth first), then gets the exporter's own short plain answer, which
 * never echoes the URL (it may carry a token), and is counted as `path="other"`.
 */
import { connect } from 'node:net';
import bcrypt from 'bcryptjs';
import { expect, test } from 'vitest';
import { NO_WEB_CONFIG, type WebConfig } from '../../src/serve/web-config.js';
import { value } from '../helpers/exposition.js';
import { renderedLater, testApps } from '../helpers/app.js';

const REQUESTS = 'flussonic_exporter_http_requests_total';
const WEB: WebConfig = { ...NO_WEB_CONFIG, headers: { 'X-Frame-Options': 'deny' }, users: new Map([['prom', bcrypt.hashSync('right', 4)]]) };
const RIGHT = `Basic ${Buffer.from('prom:right').toString('base64')}`;

const build = testApps();
const app = (web: WebConfig = WEB) => build({ guards: { webConfig: () => web, maxRequests: 5 } });

test('a malformed percent-encoding asks for credentials first, then gets a plain 400 that does not echo the URL', async () => {
  const { app: served } = app();
  for (const url of ['/%', '/metrics%zz?token=SECRET-TOKEN']) {
    const refused = await served.inject({ method: 'GET', url });
    expect([refused.statusCode, refused.headers['www-authenticate'], refused.headers['x-frame-options']], url).toEqual([401, 'Basic', 'deny']);
    const wrong = await served.inject({ method: 'GET', url, headers: { authorization: `Basic ${Buffer.from('prom:wrong').toString('base64')}` } });
    expect(wrong.statusCode, url).toBe(401);
    const bad = await served.inject({ method: 'GET', url, headers: { authorization: RIGHT } });
    expect([bad.statusCode, bad.headers['content-type'], bad.headers['x-frame-options'], bad.body], url).toEqual([400, 'text/plain; charset=utf-8', 'deny', 'bad request\n']);
  }
});

test('a route parameter over the router length limit gets a plain 414, also behind the guards', async () => {
  const { app: served } = app();
  const url = `/events/${'a'.repeat(200)}?token=SECRET-TOKEN`;
  expect((await served.inject({ method: 'POST', url, payload: '[]' })).statusCode).toBe(401);
  const res = await served.inject({ method: 'POST', url, payload: '[]', headers: { authorization: RIGHT } });
  expect([res.statusCode, res.headers['content-type'], res.headers['x-frame-options'], res.body]).toEqual([414, 'text/plain; charset=utf-8', 'deny', 'URI too long\n']);
});

test('the answers are counted as path="other"', async () => {
  const { app: served, self } = app();
  for (let i = 0; i < 3; i++) expect((await served.inject({ method: 'GET', url: '/%', headers: { authorization: RIGHT } })).statusCode).toBe(400);
  expect((await served.inject({ method: 'GET', url: '/%' })).statusCode).toBe(401);
  expect((await served.inject({ method: 'POST', url: `/events/${'a'.repeat(200)}`, headers: { authorization: RIGHT } })).statusCode).toBe(414);
  const text = await renderedLater(self);
  expect(value(text, REQUESTS, { path: 'other', code: '400' })).toBe(3);
  expect(value(text, REQUESTS, { path: 'other', code: '401' })).toBe(1);
  expect(value(text, REQUESTS, { path: 'other', code: '414' })).toBe(1);
});

test('over a real socket, without a web config: 400, plain, nothing of the URL', async () => {
  const { app: served } = app(NO_WEB_CONFIG);
  await served.listen({ host: '127.0.0.1', port: 0 });
  const port = (served.server.address() as { port: number }).port;
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write('GET /metrics%zz?token=SECRET-TOKEN HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    socket.setTimeout(5000, () => socket.destroy());
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.once('error', reject);
    socket.once('close', () => resolve(text));
  });
  expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  expect(answer.toLowerCase()).toContain('\r\ncontent-type: text/plain; charset=utf-8\r\n');
  expect(answer).not.toContain('SECRET-TOKEN');
  expect(answer).not.toContain('metrics%zz');
});
