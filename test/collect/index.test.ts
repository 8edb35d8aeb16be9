import { describe, expect, it } from 'vitest';
import { COLLECTORS } from '../../src/collect/index.js';

describe('collector table', () => {
  it('has streams and server, enabled by default, each name once', () => {
    const byName = new Map(COLLECTORS.map((c) => [c.name, c]));
    expect(byName.size).toBe(COLLECTORS.length);
    expect(byName.get('streams')?.defaultEnabled).toBe(true);
    expect(byName.get('server')?.defaultEnabled).toBe(true);
  });

  it('creates a fresh collector per server', () => {
    for (const entry of COLLECTORS) {
      const config = {} as Parameters<typeof entry.create>[0];
      const a = entry.create(config);
      expect(typeof a.collect).toBe('function');
      expect(entry.create(config)).not.toBe(a);
    }
  });
});
