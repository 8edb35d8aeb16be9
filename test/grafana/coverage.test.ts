/** The reading of alert expressions that the end-to-end test's "alerts that can fire" count rests on. */
import { describe, expect, it } from 'vitest';
import { alertCoverage, neededAlternatives } from './coverage.js';

describe('neededAlternatives', () => {
  it('reads a top-level or as alternatives', () => {
    expect(neededAlternatives('job_server_stream:a:rate5m > 1\nor\nmax by (job) (avg_over_time(b[5m])) > 1')).toEqual([['job_server_stream:a:rate5m'], ['b']]);
  });

  it('needs only the left side of unless, and both sides of and', () => {
    expect(neededAlternatives('(a == 0) unless on (x) (b)')).toEqual([['a']]);
    expect(neededAlternatives('increase(c[15m]) >= 3 and on (job, instance) max_over_time(d[15m]) == 1')).toEqual([['c', 'd']]);
  });

  it('opens parentheses around a whole side, and does not take on (...) labels for selectors', () => {
    expect(neededAlternatives('((a or b) unless c) or on (x) d * 0')).toEqual([['a'], ['b'], ['d']]);
  });
});

describe('alertCoverage', () => {
  it('can fire when one alternative is complete, and names what the nearest one misses otherwise', () => {
    expect(alertCoverage('A', 'x > 1 or y > 1', new Set(['y']))).toEqual({ alert: 'A', canFire: true, missing: [] });
    expect(alertCoverage('A', 'x and z or y and w and v', new Set(['x']))).toEqual({ alert: 'A', canFire: false, missing: ['z'] });
  });
});
