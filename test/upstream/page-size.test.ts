/**
 * The page size of a walk (src/upstream/page-size.ts): `page_size`, halved while the previous
 * walk's items would make a page larger than PAGE_BYTES_GOAL, never below a sixteenth nor past
 * `max_pages`; and, through the real Flussonic client against the simulator, nested stream pages
 * (2.2 KB an item) asked for in halves from the second walk on while flat ones (0.8 KB) keep
 * `page_size`, with every stream mapped either way.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectStreams } from '../../src/collect/streams.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import { FlussonicClient } from '../../src/flussonic/client.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { PAGE_BYTES_GOAL, PageSize } from '../../src/upstream/page-size.js';
import { exposition, newWriter, SERVER } from '../collect/helpers.js';
import { captureLogger, NO_STATS, serverConfig } from '../helpers/runtime.js';

const KB = 1024;

describe('PageSize', () => {
  it('asks for page_size until a walk has been read', () => {
    expect(new PageSize(1000, 10_000).limit).toBe(1000);
  });

  it('keeps page_size while a page of it stays within the goal', () => {
    const size = new PageSize(1000, 10_000);
    size.learn(774 * 1000, 1000); // a flat stream item
    expect(size.limit).toBe(1000);
    size.learn(PAGE_BYTES_GOAL, 1000); // exactly the goal
    expect(size.limit).toBe(1000);
  });

  it('halves page_size until the page fits, judged by the last walk alone', () => {
    const size = new PageSize(1000, 10_000);
    size.learn(2.2 * KB * 10_000, 10_000); // a nested stream item: 2.2 MB a page of 1,000
    expect(size.limit).toBe(500);
    size.learn(5 * KB * 120, 120); // 5 KB items: 2.4 MB at 500
    expect(size.limit).toBe(250);
    size.learn(600 * 1200, 1200); // small again: back to page_size
    expect(size.limit).toBe(1000);
  });

  it('never goes below a sixteenth of page_size, nor below one item', () => {
    const size = new PageSize(1000, 10_000);
    size.learn(4 * 1024 * KB, 1); // one 4 MB item
    expect(size.limit).toBe(62);
    const small = new PageSize(3, 10_000);
    small.learn(4 * 1024 * KB, 1);
    expect(small.limit).toBe(1);
  });

  it('takes no half that would make the last walk need more than max_pages pages', () => {
    const size = new PageSize(1000, 10);
    size.learn(2.2 * KB * 10_000, 10_000); // 10 pages of 1,000; 20 of 500
    expect(size.limit).toBe(1000);
    size.learn(5 * KB * 4000, 4000); // 5 KB items: 8 pages of 500, 16 of 250
    expect(size.limit).toBe(500);
  });

  it('learns nothing from a walk that read no item', () => {
    const size = new PageSize(1000, 10_000);
    size.learn(3 * 1024 * KB, 1000);
    size.learn(120, 0);
    expect(size.limit).toBe(500);
  });
});

const SILENT = pino({ level: 'silent' });

for (const [shape, secondLimit] of [
  ['flat', 1000],
  ['nested', 500],
] as const) {
  describe(`stream pages through the Flussonic client (${shape} stats)`, () => {
    let sim: RunningSimulator;
    beforeAll(async () => {
      sim = await startSimulator({ streams: 1200, sessions: 50, shape, seed: 3, clock: 'manual', churn: false });
    });
    afterAll(() => sim.close());

    it(`asks for ${secondLimit} streams a page from the second walk on, and maps every stream either way`, async () => {
      const config = serverConfig(SERVER, sim.url, { pageSize: 1000, families: DEFAULTS.server.families });
      const log = captureLogger();
      const client = new FlussonicClient({ config, stats: NO_STATS, retryBackoffMs: 1, log: log.logger });
      const walk = async () => {
        sim.requests.clear();
        const out = newWriter();
        await collectStreams({ client, config, signal: AbortSignal.timeout(15_000), log: SILENT, out });
        const limits = sim.requests.entries().filter((r) => r.apiPath === '/streams').map((r) => Number(r.query.limit));
        return { limits, text: exposition(out), problems: out.problems };
      };
      try {
        const first = await walk();
        const second = await walk();
        const third = await walk();
        expect(first.limits).toEqual([1000, 1000]);
        expect(second.limits).toEqual(Array(Math.ceil(1200 / secondLimit)).fill(secondLimit));
        expect(third.limits).toEqual(second.limits); // steady from walk to walk
        expect(first.problems).toEqual([]);
        expect(second.text).toBe(first.text);
        expect(second.text.match(/^flussonic_stream_alive\{/gm)).toHaveLength(1200);
        // One debug line when the size changes, none while it holds.
        const changes = log.entries().filter((e) => String(e.msg).startsWith('page size of this walk changed'));
        expect(changes.map((e) => [e.endpoint, e.limit])).toEqual(secondLimit === 1000 ? [] : [['/streams', secondLimit]]);
      } finally {
        await client.close();
      }
    });
  });
}
