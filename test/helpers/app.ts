/**
 * The exporter's HTTP app without targets (buildApp) for tests that inject requests into it: test
 * defaults (metrics path /metrics, no web config, no prom-client process figures) that `deps`
 * override, closed after each test of the file that made the factory.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { buildApp, type AppDeps } from '../../src/serve/app.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import type { RouteDeclaration } from '../../src/serve/routes.js';
import { RENDER_REUSE_MS, SelfMetrics } from '../../src/serve/self.js';
import { captureLogger, type CapturedLog } from './runtime.js';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly self: SelfMetrics;
  readonly log: CapturedLog;
}

/**
 * The self-metrics once the rendering the scrapes made can no longer be reused: a request counted
 * does not mark them changed, so a scrape may show a count up to RENDER_REUSE_MS old.
 */
export async function renderedLater(self: SelfMetrics): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, RENDER_REUSE_MS + 20));
  return self.render();
}

/** The lines of `log` at error level or above. */
export const errorLines = (log: CapturedLog): Record<string, unknown>[] => log.entries().filter((e) => typeof e.level === 'number' && e.level >= 50);

/** AppDeps with the test defaults, `overrides` on top (routes.test.ts builds route lists from them). */
export function testAppDeps(overrides: Partial<AppDeps> = {}): AppDeps & { readonly log: CapturedLog } {
  const log = captureLogger();
  return {
    logger: log.logger,
    version: 'test',
    metricsPath: '/metrics',
    exposition: new ExpositionCache(),
    self: new SelfMetrics({ version: 'test', defaultMetrics: false, demo: false }),
    statuses: () => [],
    ready: () => true,
    ...overrides,
    log,
  };
}

/** Call at a test file's top level: returns the builder; every app it built is closed after each test. */
export function testApps(): (overrides?: Partial<AppDeps>, table?: readonly RouteDeclaration[]) => TestApp {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  return (overrides, table) => {
    const deps = testAppDeps(overrides);
    const app = buildApp(deps, table);
    apps.push(app);
    return { app, self: deps.self, log: deps.log };
  };
}
