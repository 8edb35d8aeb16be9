/**
 * flussonic_exporter_http_requests_total{path,code}: every answer of the HTTP face is counted by
 * its route's path from the route table (any other path as `other`, so the label stays bounded)
 * and its status code, the guards' refusals (401, 405, 503) and the lifecycle's 403 included.
 */
import bcrypt from 'bcryptjs';
import { expect, test } from 'vitest';
import type { AppDeps } from '../../src/serve/app.js';
import { NO_WEB_CONFIG, type WebConfig } from '../../src/serve/web-config.js';
import { value } from '../helpers/exposition.js';
import { renderedLater, testApps } from '../helpers/app.js';

const REQUESTS = 'flussonic_exporter_http_requests_total';
const build = testApps();
const app = (guards?: AppDeps['guards']) => build(guards ? { guards } : {});

test('counts answers by route path and code; unknown paths are one value', async () => {
  const { app: served, self } = app();
  for (let i = 0; i < 3; i++) expect((await served.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
  expect((await served.inject({ method: 'GET', url: '/metrics/' })).statusCode).toBe(200);
  // Counted by the route fastify runs, however its path is spelled.
  for (const url of ['/metric%73', '/%6detrics?x=1']) expect((await served.inject({ method: 'GET', url })).statusCode).toBe(200);
  expect((await served.inject({ method: 'POST', url: '/metric%73' })).statusCode).toBe(405);
  expect((await served.inject({ method: 'POST', url: '/metrics' })).statusCode).toBe(405);
  expect((await served.inject({ method: 'GET', url: '/-/reload' })).statusCode).toBe(405);
  expect((await served.inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(403);
  for (const url of ['/nope', '/a/b?c=d', '/metricsx']) expect((await served.inject({ method: 'GET', url })).statusCode).toBe(404);
  const text = await renderedLater(self);
  expect(value(text, REQUESTS, { path: '/metrics', code: '200' })).toBe(6);
  expect(value(text, REQUESTS, { path: '/metrics', code: '405' })).toBe(2);
  expect(value(text, REQUESTS, { path: '/-/reload', code: '405' })).toBe(1);
  expect(value(text, REQUESTS, { path: '/-/reload', code: '403' })).toBe(1);
  expect(value(text, REQUESTS, { path: 'other', code: '404' })).toBe(3);
  // Nothing of the request's own path reaches a label.
  expect(text).not.toContain('/nope');
});

test('counts 401 for missing or wrong credentials and 503 beyond the scrape cap', async () => {
  const web: WebConfig = { ...NO_WEB_CONFIG, users: new Map([['prom', bcrypt.hashSync('right', 4)]]) };
  const { app: served, self } = app({ webConfig: () => web, maxRequests: 0 });
  const basic = (password: string) => `Basic ${Buffer.from(`prom:${password}`).toString('base64')}`;
  expect((await served.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
  expect((await served.inject({ method: 'GET', url: '/metrics', headers: { authorization: basic('wrong') } })).statusCode).toBe(401);
  expect((await served.inject({ method: 'GET', url: '/-/healthy', headers: { authorization: basic('right') } })).statusCode).toBe(200);
  // A cap of 0 concurrent scrapes refuses every one.
  expect((await served.inject({ method: 'GET', url: '/metrics', headers: { authorization: basic('right') } })).statusCode).toBe(503);
  const text = await renderedLater(self);
  expect(value(text, REQUESTS, { path: '/metrics', code: '401' })).toBe(2);
  expect(value(text, REQUESTS, { path: '/-/healthy', code: '200' })).toBe(1);
  expect(value(text, REQUESTS, { path: '/metrics', code: '503' })).toBe(1);
});

test('requests log through the HTTP logger itself: no logger is made per request', async () => {
  const { app: served } = app();
  const loggers = new Set<unknown>();
  served.addHook('onRequest', async (request) => {
    loggers.add(request.log);
  });
  for (let i = 0; i < 3; i++) expect((await served.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
  expect([...loggers]).toEqual([served.log]);
});
