/**
 * The app's error answers: a client's mistake (a body that does not parse) is answered 4xx and
 * not logged at error level, so no one who can reach the port can fill the log; a failure of the
 * exporter's own is answered 500 and logged, on every route, those that read their body themselves
 * (POST /-/reload) included.
 */
import { expect, test } from 'vitest';
import { ROUTE_TABLE, type RouteDeclaration } from '../../src/serve/routes.js';
import { errorLines, testApps } from '../helpers/app.js';

const build = testApps();
const app = (table: readonly RouteDeclaration[] = ROUTE_TABLE) => build({ lifecycle: { enabled: true, reload: () => ({ ok: true }) } }, table);

test('a body that does not parse is answered 400 and not logged at error level', async () => {
  const { app: served, log } = app();
  for (let i = 0; i < 3; i++) {
    const res = await served.inject({ method: 'POST', url: '/nope', headers: { 'content-type': 'application/json' }, payload: '{bad' });
    expect([res.statusCode, res.headers['content-type'], res.body]).toEqual([400, 'text/plain; charset=utf-8', 'bad request\n']);
  }
  expect(errorLines(log)).toEqual([]);
});

test("a failure of the exporter's own is answered 500 and logged at error level", async () => {
  const fail = (): never => {
    throw new Error('broken');
  };
  const { app: served, log } = app(ROUTE_TABLE.map((r): RouteDeclaration => (r.path === '/-/reload' || r.path === '/-/healthy' ? { ...r, handler: () => fail } : r)));
  for (const [method, url] of [['GET', '/-/healthy'], ['POST', '/-/reload']] as const) {
    const res = await served.inject({ method, url });
    expect([res.statusCode, res.body], url).toEqual([500, 'internal error\n']);
  }
  expect(errorLines(log).map((e) => e.msg)).toEqual(['request failed', 'request failed']);
});
