import { describe, expect, it } from 'vitest';
import { SAMPLES_2021, SAMPLES_2025, sharedFile } from '../helpers/shared.js';
import { readFixture, readJson } from './helpers.js';

// The fixture copies (test/fixtures/README.md) must stay equal to their sources in ../shared.
describe('fixture copies of the ../shared samples', () => {
  it('2021 runtime streams c/01, c/04, c/09 equal the items of streams_items.json', (ctx) => {
    const path = sharedFile(`${SAMPLES_2021}/streams_items.json`);
    if (!path) return ctx.skip();
    const source = (readJson(path) as { name: string }[]).filter((s) => ['c/01', 'c/04', 'c/09'].includes(s.name));
    expect(readFixture('flussonic/2021-runtime-streams-c01-c04-c09.json')).toEqual(source);
  });

  for (const [fixture, source] of [
    ['2025-example-streams_list.json', 'streams_list.json'],
    ['2025-example-config_stats_get.json', 'config_stats_get.json'],
  ] as const) {
    it(`${fixture} equals ${source}`, (ctx) => {
      const path = sharedFile(`${SAMPLES_2025}/${source}`);
      if (!path) return ctx.skip();
      expect(readFixture(`flussonic/${fixture}`)).toEqual(readJson(path));
    });
  }
});
