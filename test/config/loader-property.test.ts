/**
 * Property test of the config loader: over arbitrary JSON/YAML values and arbitrary text,
 * parseConfigText either returns a config or throws a ConfigError with its problems; it never
 * throws anything else, and a config it returns has the invariants the poller relies on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { compileStreamFilter, parseConfigText, type ExporterConfig } from '../../src/config/index.js';
import { KNOWN_KEYS } from '../../src/docs/config-schema.js';
import { isConfigError, type ConfigError } from '../../src/lib/errors.js';

const OPTIONS = { source: 'property.yaml', baseDir: '/nonexistent-config-dir', env: { SET: 'value' } };

/** Either a config or a ConfigError: anything else thrown fails the property. */
function load(text: string): ExporterConfig | ConfigError {
  try {
    return parseConfigText(text, OPTIONS);
  } catch (error) {
    if (isConfigError(error)) return error;
    throw error;
  }
}

function checkConfig(config: ExporterConfig): void {
  for (const target of [...config.servers, ...config.catena]) {
    expect(target.timeoutMs).toBeGreaterThan(0);
    expect(target.timeoutMs).toBeLessThan(target.pollIntervalMs);
  }
  // Stream filters compile (RE2) and answer for any name without throwing.
  for (const server of config.servers) compileStreamFilter(server.streams)('a'.repeat(64));
}

const keys = fc.constantFrom(...new Set([...KNOWN_KEYS.top, ...KNOWN_KEYS.server, ...KNOWN_KEYS.catena, 'include', 'exclude', 'x-a', '<<']));
const scalar = fc.oneof(
  fc.string({ maxLength: 16 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('1s', '10s', '0ms', '1h30m', 'http://127.0.0.1:1', '(a+)+b', '(a)\\1', '${SET}', '${UNSET}', 'edge-.*', ':9228', '/metrics', 'now', '24h'),
);
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, tie('map'), tie('list')),
  map: fc.dictionary(keys, tie('node'), { maxKeys: 6 }),
  list: fc.array(tie('node'), { maxLength: 3 }),
})).node;
/** Configs shaped like the real thing, so that validation (not only parsing) is exercised. */
const configLike = fc.record({
  poll_interval: fc.option(scalar, { nil: undefined }),
  servers: fc.array(fc.dictionary(keys, value, { maxKeys: 6 }).map((s) => ({ name: 'n', url: 'http://127.0.0.1:1', ...s })), { maxLength: 3 }),
  catena: fc.option(fc.array(fc.dictionary(keys, value, { maxKeys: 5 }), { maxLength: 2 }), { nil: undefined }),
}, { requiredKeys: [] });

describe('config loader over arbitrary input', () => {
  it('arbitrary YAML values: a config or a ConfigError, never another exception', () => {
    fc.assert(
      fc.property(fc.oneof(value, configLike, fc.jsonValue()), (doc) => {
        const result = load(stringify(doc));
        if (!isConfigError(result)) checkConfig(result);
        else expect(result.problems.length).toBeGreaterThan(0);
      }),
      { numRuns: 300, seed: 3 },
    );
  });

  it('arbitrary text (broken YAML, anchors, tags): a config or a ConfigError', () => {
    const fragments = fc.constantFrom('servers:\n', '  - ', 'name: a\n', 'url: http://h\n', '&a ', '*a ', '<<: ', '!!binary ', '{', '[', ']', '}', ': ', '"', "'", '\n', '  ', '- ', '%YAML 1.2\n', '---\n', '#c\n', '? ', '|\n', '>\n');
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.array(fragments, { maxLength: 40 }).map((a) => a.join(''))), (text) => {
        const result = load(text);
        if (!isConfigError(result)) checkConfig(result);
      }),
      { numRuns: 500, seed: 4 },
    );
  });
});
