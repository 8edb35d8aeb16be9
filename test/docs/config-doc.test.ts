/**
 * The config schema (src/config/schema.ts) is the one place settings are declared:
 * config.schema.json, docs/configuration.md and config.example.yaml are generated from it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { configJsonSchema, configJsonSchemaText, KNOWN_KEYS } from '../../src/docs/config-schema.js';
import { renderConfigExample } from '../../src/docs/config-example.js';
import { renderConfigMarkdown } from '../../src/docs/config-markdown.js';
import { REPO_ROOT } from '../helpers/shared.js';

const read = (file: string): string => readFileSync(join(REPO_ROOT, file), 'utf8');

describe('generated config files', () => {
  test('config.schema.json is the schema as declared (else run npm run docs:config)', () => {
    expect(read('config.schema.json') === configJsonSchemaText(), 'config.schema.json is stale: run `npm run docs:config` and commit it').toBe(true);
  });

  test('docs/configuration.md is the rendering of the schema (else run npm run docs:config)', () => {
    expect(read('docs/configuration.md') === renderConfigMarkdown(), 'docs/configuration.md is stale: run `npm run docs:config` and commit it').toBe(true);
  });

  test('config.example.yaml is the example the schema gives (else run npm run docs:config)', () => {
    expect(read('config.example.yaml') === renderConfigExample(), 'config.example.yaml is stale: run `npm run docs:config` and commit it').toBe(true);
  });

  test('a changed schema changes the rendering (the staleness check can fail)', () => {
    const schema = configJsonSchema();
    const changed = { ...schema, properties: { ...schema.properties, log_level: { ...schema.properties!.log_level, description: 'changed' } } };
    expect(renderConfigMarkdown(changed)).not.toBe(renderConfigMarkdown());
    expect(renderConfigExample(changed)).not.toBe(renderConfigExample());
  });

  test('the reference has a row for every key, with its help', () => {
    const rows = renderConfigMarkdown().split('\n').filter((line) => line.startsWith('| `'));
    for (const key of new Set(Object.values(KNOWN_KEYS).flat())) {
      const row = rows.find((r) => r.startsWith(`| \`${key}\` |`));
      expect(row, key).toBeDefined();
      expect(row!.split('|').at(-2)!.trim(), key).not.toBe('');
    }
  });
});

describe('config.example.yaml and the JSON Schema', () => {
  test('names the schema on its first line, for editors', () => {
    expect(read('config.example.yaml').split('\n')[0]).toBe('# yaml-language-server: $schema=./config.schema.json');
  });

  test('passes the JSON Schema, and a misspelt key does not', () => {
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(configJsonSchema());
    const example = parse(read('config.example.yaml'), { merge: true }) as Record<string, unknown>;
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...example, poll_intervall: '15s' })).toBe(false);
  });
});
