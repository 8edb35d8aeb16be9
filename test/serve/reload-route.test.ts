/**
 * POST /-/reload ignores its body, as Prometheus does: whatever its content type (none, a form,
 * XML, JSON that does not parse) it answers 403 without --web.enable-lifecycle and reloads with
 * it; a body over RELOAD_BODY_LIMIT is refused (413). Nothing of it is logged at error level.
 */
import { describe, expect, test } from 'vitest';
import { RELOAD_BODY_LIMIT } from '../../src/serve/handlers.js';
import { errorLines, testApps } from '../helpers/app.js';

const build = testApps();

function app(enabled: boolean | undefined) {
  let reloads = 0;
  const built = build(enabled === undefined ? {} : { lifecycle: { enabled, reload: () => ((reloads += 1), { ok: true }) } });
  return { ...built, reloads: () => reloads };
}

const BODIES: readonly { what: string; headers?: Record<string, string>; payload?: string }[] = [
  { what: 'no body' },
  { what: 'an empty form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' },
  { what: 'a form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'x=1' },
  { what: 'XML', headers: { 'content-type': 'application/xml' }, payload: '<a/>' },
  { what: 'JSON that does not parse', headers: { 'content-type': 'application/json' }, payload: '{bad' },
  { what: 'no content type', headers: { 'content-length': '3' }, payload: 'abc' },
];

describe('POST /-/reload ignores its body', () => {
  test.each([undefined, false])('lifecycle %s: 403 whatever the body, nothing logged', async (enabled) => {
    const { app: served, log, reloads } = app(enabled);
    for (const { what, headers, payload } of [...BODIES, { what: 'a body over the limit', headers: { 'content-type': 'application/json' }, payload: 'x'.repeat(RELOAD_BODY_LIMIT + 1) }]) {
      const res = await served.inject({ method: 'POST', url: '/-/reload', ...(headers ? { headers } : {}), ...(payload !== undefined ? { payload } : {}) });
      expect([res.statusCode, res.body], what).toEqual([403, 'Lifecycle API is not enabled.\n']);
    }
    expect(reloads()).toBe(0);
    expect(errorLines(log)).toEqual([]);
  });

  test('with --web.enable-lifecycle: 200 and a reload whatever the body; over the limit 413 without one', async () => {
    const { app: served, log, reloads } = app(true);
    for (const { what, headers, payload } of BODIES) {
      const res = await served.inject({ method: 'POST', url: '/-/reload', ...(headers ? { headers } : {}), ...(payload !== undefined ? { payload } : {}) });
      expect([res.statusCode, res.body], what).toEqual([200, '']);
    }
    expect(reloads()).toBe(BODIES.length);
    const big = await served.inject({ method: 'POST', url: '/-/reload', headers: { 'content-type': 'application/json' }, payload: 'x'.repeat(RELOAD_BODY_LIMIT + 1) });
    expect([big.statusCode, big.headers['content-type']]).toEqual([413, 'text/plain; charset=utf-8']);
    expect(reloads()).toBe(BODIES.length);
    expect(errorLines(log)).toEqual([]);
  });
});
