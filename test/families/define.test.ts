/** The declarations of families: what defineFamilies() derives and what it refuses. */
import { describe, expect, it } from 'vitest';
import { byDefault, core, defineFamilies, optional, selectOf } from '../../src/families/define.js';
import { BOOLEAN, NON_NEGATIVE, rangeFor } from '../../src/families/ranges.js';

const L = ['server', 'thing'] as const;

describe('defineFamilies', () => {
  it('keeps the order of the table, ranks optional families before default ones, core at -1', () => {
    const t = defineFamilies(
      'streams',
      {
        a: { name: 'x_a_total', type: 'counter', labels: L, help: 'a', tier: core(1) },
        b: { name: 'x_b_seconds', type: 'gauge', labels: L, help: 'b', tier: byDefault(1), reads: ['b1'] },
        c: { name: 'x_c_ratio', type: 'gauge', labels: L, help: 'c', tier: optional('dvr', 1), reads: ['c1', 'b1'] },
        d: { name: 'x_d', type: 'gauge', labels: L, help: 'd', tier: optional('tracks'), range: BOOLEAN },
      },
      ['b', 'd', 'c'],
    );
    expect(Object.values(t).map((f) => f.name)).toEqual(['x_a_total', 'x_b_seconds', 'x_c_ratio', 'x_d']);
    expect([t.a.shedRank, t.b.shedRank, t.c.shedRank, t.d.shedRank]).toEqual([-1, 2, 1, 0]);
    expect(t.c.switch).toBe('families.dvr');
    expect(t.c.range).toEqual(rangeFor('x_c_ratio'));
    expect(t.d.range).toBe(BOOLEAN);
    expect(t.a.range).toBe(NON_NEGATIVE);
    expect(selectOf('name', t)).toEqual(['name', 'b1', 'c1']);
  });

  it('refuses a sheddable family missing from the shedding order, and a core one in it', () => {
    const decl = { name: 'x_b', type: 'gauge', labels: L, help: 'b', tier: byDefault() } as const;
    expect(() => defineFamilies('streams', { b: decl })).toThrow(/x_b: a default family must be in the shedding order of streams once/);
    expect(() => defineFamilies('streams', { a: { ...decl, tier: core() } }, ['a'])).toThrow(/core family/);
  });
});
