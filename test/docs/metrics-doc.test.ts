/**
 * The catalogue in code is the contract: METRICS.md is generated from it, and it must match the
 * design's catalogue (../shared/design/metrics.md) in both directions: names, types, labels.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { renderMetricsMarkdown } from '../../src/docs/metrics-markdown.js';
import { CATALOGUE } from '../../src/serve/catalogue.js';
import { REPO_ROOT, sharedFile } from '../helpers/shared.js';

describe('METRICS.md', () => {
  test('is the rendering of the current catalogue (else run npm run docs:metrics)', () => {
    const committed = readFileSync(join(REPO_ROOT, 'METRICS.md'), 'utf8');
    expect(committed === renderMetricsMarkdown(), 'METRICS.md is stale: run `npm run docs:metrics` and commit it').toBe(true);
  });

  test('lists every family of the catalogue once, with its type', () => {
    const rendered = renderMetricsMarkdown();
    for (const family of CATALOGUE) {
      const rows = rendered.split('\n').filter((line) => line.startsWith(`| \`${family.name}\` |`));
      expect(rows, family.name).toHaveLength(1);
      expect(rows[0]).toContain(`| ${family.type}`);
    }
  });

  test('a changed catalogue changes the rendering (the staleness check can fail)', () => {
    const changed = CATALOGUE.map((f, i) => (i === 0 ? { ...f, help: `${f.help} (changed)` } : f));
    expect(renderMetricsMarkdown(changed)).not.toBe(renderMetricsMarkdown());
  });
});

interface DesignFamily {
  readonly type: string;
  readonly labels: readonly string[];
  readonly groupBy: boolean;
}

/**
 * The tables of design/metrics.md: rows `| \`name\` | type | labels | ... |`. A row may name
 * several families by suffix: `` `flussonic_server_events_resent_total` / `_dropped_total` `` means
 * the last segments of the first name replaced by the suffix's.
 */
function parseDesignCatalogue(markdown: string): Map<string, DesignFamily> {
  const families = new Map<string, DesignFamily>();
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('| `flussonic_')) continue;
    const [, namesCell, typeCell, labelsCell] = line.split('|').map((cell) => cell.trim());
    const names = [...namesCell!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    const first = names[0]!;
    const labelTokens = labelsCell!.split(',').map((l) => l.trim()).filter((l) => l !== '');
    const groupBy = labelTokens.includes('group_by labels');
    const family = { type: typeCell!, labels: labelTokens.filter((l) => l !== 'group_by labels'), groupBy };
    for (const name of names) {
      if (!name.startsWith('_')) {
        families.set(name, family);
        continue;
      }
      const replaced = name.split('_').length - 1;
      families.set(`${first.split('_').slice(0, -replaced).join('_')}${name}`, family);
    }
  }
  return families;
}

/** The design's catalogue with the project's additions (docs/metrics-additions.md) laid over it. */
function contractCatalogue(designPath: string): Map<string, DesignFamily> {
  const design = parseDesignCatalogue(readFileSync(designPath, 'utf8'));
  const additions = parseDesignCatalogue(readFileSync(join(REPO_ROOT, 'docs', 'metrics-additions.md'), 'utf8'));
  return new Map([...design, ...additions]);
}

describe('the catalogue matches design/metrics.md and docs/metrics-additions.md', () => {
  const path = sharedFile('design/metrics.md');

  test.skipIf(!path)('every family of the design and of the additions is in the catalogue with the same type and labels', () => {
    const design = contractCatalogue(path!);
    expect(design.size).toBeGreaterThan(80);
    const inCode = new Map(CATALOGUE.map((f) => [f.name, f]));
    const problems: string[] = [];
    for (const [name, want] of design) {
      const have = inCode.get(name);
      if (!have) {
        problems.push(`${name}: in the design, missing from the catalogue`);
        continue;
      }
      if (have.type !== want.type) problems.push(`${name}: type ${have.type} in code, ${want.type} in the design`);
      if ([...have.labels].sort().join(',') !== [...want.labels].sort().join(',')) problems.push(`${name}: labels [${have.labels}] in code, [${want.labels}] in the design`);
      if (Boolean(have.groupByLabels) !== want.groupBy) problems.push(`${name}: group_by labels ${have.groupByLabels ? 'in code only' : 'in the design only'}`);
    }
    expect(problems).toEqual([]);
  });

  test.skipIf(!path)('every family of the catalogue is in the design or the additions', () => {
    const design = contractCatalogue(path!);
    expect(CATALOGUE.map((f) => f.name).filter((name) => !design.has(name))).toEqual([]);
  });
});
