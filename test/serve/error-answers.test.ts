/**
 * The app's error answers: a client's mistake (a body that does not parse) is answered 4xx and
 * not logged at error level, so no one who can reach the port can fill the log; a failure of the
 * exporter's own is answered 500 and logged, on every route, those that read their body themselves
 * (POST /-/reload) included.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, test } from 'vitest';
import { buildApp } from '../../src/serve/app.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { ROUTE_TABLE, type RouteDeclaration } from '../../src/serve/routes.js';
import { SelfMetrics } from '../../src/serve/self.js';
import { captureLogger, type CapturedLog } from '../helpers/runtime.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function app(table: readonly RouteDeclaration[] = ROUTE_TABLE): { app: FastifyInstance; log: CapturedLog } {
  const log = captureLogger();
  const built = buildApp(
    {
      logger: log.logger,
      version: 'test',
      metricsPath: '/metrics',
      exposition: new ExpositionCache(),
      self: new SelfMetrics({ version: 'test', defaultMetrics: false, demo: false }),
      statuses: () => [],
      ready: () => true,
      lifecycle: { enabled: true, reload: () => ({ ok: true }) },
    },
    table,
  );
  apps.push(built);
  return { app: built, log };
}

const errorLines = (log: CapturedLog) => log.entries().filter((e) => typeof e.level === 'number' && e.level >= 50);

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
