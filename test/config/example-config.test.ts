/** config.example.yaml is valid and documents every option the validator knows. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { KNOWN_KEYS } from '../../src/docs/config-schema.js';
import { REPO_ROOT } from '../helpers/shared.js';

const EXAMPLE = join(REPO_ROOT, 'config.example.yaml');
const ENV = { FLUSSONIC_PASSWORD: 'example-password', CATENA_API_KEY: 'example-key' };

describe('config.example.yaml', () => {
  test('loads and validates with the variables it references set', () => {
    const config = loadConfig(EXAMPLE, ENV);
    expect(config.servers.map((s) => s.name)).toEqual(['edge-1']);
    expect(config.catena.map((c) => c.name)).toEqual(['main']);
    expect(config.servers[0]!.credentials).toEqual({ kind: 'basic', username: 'monitor', password: 'example-password' });
    expect(config.catena[0]!.apiKey).toBe('example-key');
  });

  test('fails without the variables, naming them', () => {
    expect(() => loadConfig(EXAMPLE, {})).toThrow(/servers\[0\]\.password: environment variable FLUSSONIC_PASSWORD is not set.*catena\[0\]\.api_key: environment variable CATENA_API_KEY is not set/);
  });

  test('names every known key, each with a comment on its line', () => {
    const lines = readFileSync(EXAMPLE, 'utf8').split('\n');
    const missing: string[] = [];
    for (const key of new Set(Object.values(KNOWN_KEYS).flat())) {
      const line = lines.find((l) => new RegExp(`^\\s*(?:- )?(?:# )?${key}:`).test(l));
      if (!line || !/ # \S/.test(line)) missing.push(key);
    }
    expect(missing).toEqual([]);
  });
});
