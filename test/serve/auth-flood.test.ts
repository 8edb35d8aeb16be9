/**
 * Basic auth under a flood of wrong passwords: failures never push a scraper's cached success out,
 * bcrypt runs off the serving thread behind a bounded queue, excess checks are refused with 429
 * and counted, and an unknown user is compared at the highest cost of the configured users. No
 * timed assertions: figures come from bench/auth-flood.mjs.
 */
import bcrypt from 'bcryptjs';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { BasicAuthChecker, dummyHashFor } from '../../src/serve/basic-auth.js';
import { basic, get, hash, serve, WebDir, type Served } from '../helpers/web.js';

const dir = new WebDir();
const running: Served[] = [];
const checkers: BasicAuthChecker[] = [];
afterEach(async () => {
  await Promise.all([...running.splice(0).map((s) => s.close()), ...checkers.splice(0).map((c) => c.close())]);
});
afterAll(() => dir.cleanup());

function checker(options?: ConstructorParameters<typeof BasicAuthChecker>[0]): BasicAuthChecker {
  const c = new BasicAuthChecker(options);
  checkers.push(c);
  return c;
}

test('600 wrong passwords do not push a cached success out of the cache', async () => {
  const auth = checker();
  const users = new Map([['scraper', hash('right')]]);
  expect(await auth.check(users, { user: 'scraper', password: 'right' })).toBe(true);
  const paid = auth.bcryptCount;
  for (let i = 0; i < 600; i += 10) {
    const wrong = await Promise.all(Array.from({ length: 10 }, (_, j) => auth.check(users, { user: j % 2 ? 'scraper' : `guess-${i + j}`, password: `guess-${i + j}` })));
    expect(wrong.every((ok) => ok === false)).toBe(true);
  }
  expect(auth.bcryptCount).toBe(paid + 600);
  // Still cached: no comparison paid for the scraper's next request.
  expect(await auth.check(users, { user: 'scraper', password: 'right' })).toBe(true);
  expect(auth.bcryptCount).toBe(paid + 600);
}, 60_000);

test('an unknown user is compared at the highest cost of the configured users', async () => {
  const auth = checker();
  const users = new Map([
    ['low', bcrypt.hashSync('a', 4)],
    ['high', bcrypt.hashSync('b', 6)],
  ]);
  expect(dummyHashFor(users)).toMatch(/^\$2b\$06\$/);
  expect(await auth.check(users, { user: 'nobody', password: 'a' })).toBe(false);
  expect([...auth.comparisonsByCost]).toEqual([[6, 1]]);
  expect(await auth.check(users, { user: 'low', password: 'wrong' })).toBe(false);
  expect([...auth.comparisonsByCost]).toEqual([
    [6, 1],
    [4, 1],
  ]);
});

describe('the bounded queue', () => {
  const users = new Map([['scraper', bcrypt.hashSync('right', 12)]]);

  test('beyond the pending cap a check is refused at once (queue_full), never queued', async () => {
    const auth = checker({ maxPending: 2 });
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => auth.verify(users, { user: 'scraper', password: `wrong-${i}` })));
    // One comparing, two waiting, three refused.
    expect(outcomes.filter((o) => o === 'queue_full')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'denied')).toHaveLength(3);
    expect(auth.bcryptCount).toBe(3);
  }, 30_000);

  test('a check that waits past its time is refused (queue_timeout) without a comparison', async () => {
    const auth = checker({ maxWaitMs: 20 });
    const outcomes = await Promise.all(Array.from({ length: 3 }, (_, i) => auth.verify(users, { user: 'scraper', password: `wrong-${i}` })));
    expect(outcomes[0]).toBe('denied');
    expect(outcomes.slice(1)).toEqual(['queue_timeout', 'queue_timeout']);
    expect(auth.bcryptCount).toBe(1);
  }, 30_000);
});

test('during a wrong-password flood a cached scrape gets 200 while the flood waits, and the excess gets 429, counted', async () => {
  const served = await serve({ webConfigFile: dir.write('flood.yml', `basic_auth_users:\n  scraper: ${bcrypt.hashSync('right', 10)}\n`) });
  running.push(served);
  const url = `${served.base}/metrics`;
  const scraper = basic('scraper', 'right');
  expect((await get(url, { authorization: scraper })).status).toBe(200);

  const flood = Array.from({ length: 100 }, (_, i) => get(url, { authorization: basic(i % 2 ? 'scraper' : `mallory-${i}`, `guess-${i}`) }));
  await until(() => served.auth.pending > 0);
  const cached = await get(url, { authorization: scraper });
  expect(cached.status).toBe(200);
  // Answered ahead of the comparisons still waiting (each of them takes a cost-10 bcrypt).
  expect(served.auth.pending).toBeGreaterThan(0);
  const statuses = (await Promise.all(flood)).map((r) => r.status);
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
  expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  const throttled = statuses.filter((s) => s === 429).length;

  const metrics = await get(url, { authorization: scraper });
  expect(metrics.body).toContain(`flussonic_exporter_http_auth_throttled_total{reason="queue_full"} ${throttled}\n`);
  expect(metrics.body).toContain('flussonic_exporter_http_auth_throttled_total{reason="queue_timeout"} 0\n');
}, 60_000);

async function until(probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
