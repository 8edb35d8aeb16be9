/** The streams budget of docs/cardinality.md is the rendering of the family declarations. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { withStreamsBudget } from '../../src/docs/cardinality-markdown.js';
import { REPO_ROOT } from '../helpers/shared.js';

const page = () => readFileSync(join(REPO_ROOT, 'docs', 'cardinality.md'), 'utf8');

describe('docs/cardinality.md', () => {
  test('has the current streams budget (else run npm run docs:metrics)', () => {
    expect(withStreamsBudget(page()) === page(), 'docs/cardinality.md is stale: run `npm run docs:metrics` and commit it').toBe(true);
  });

  test('a page with another table is rewritten (the staleness check can fail), and one without the markers is refused', () => {
    const edited = page().replace('| 8 | core |', '| 7 | core |');
    expect(edited).not.toBe(page());
    expect(withStreamsBudget(edited)).toBe(page());
    expect(() => withStreamsBudget('# no markers')).toThrow(/markers are missing/);
  });
});
