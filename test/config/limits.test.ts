/**
 * A huge or hostile config is rejected quickly and with little memory (a 26 MB config is refused
 * at once). The config file and secret files are read with a size cap, YAML alias expansion is
 * bounded, and the checks over the whole file (duplicate keys, lines of problems) are linear.
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig, validateConfig } from '../../src/config/index.js';
import { MAX_CONFIG_BYTES, MAX_SECRET_BYTES } from '../../src/lib/read-capped.js';
import { ConfigDir, configErrorOf } from './config-files.js';

const dir = new ConfigDir();
afterAll(() => dir.cleanup());

const SERVER = 'servers:\n  - name: edge-1\n    url: http://127.0.0.1:8080\n';

describe('config size limits', () => {
  test('a 26 MB config is refused at once, naming the file and the cap', () => {
    const line = '  - { name: s, url: "http://h" }\n';
    const file = dir.write('huge.yaml', `servers:\n${line.repeat(Math.ceil(26e6 / line.length))}`);
    const error = configErrorOf(() => loadConfig(file, {}));
    expect(error.problems).toEqual([{ path: '', message: 'cannot read the config file (larger than the 1MiB cap)' }]);
    expect(error.message).toContain(file);
    expect(MAX_CONFIG_BYTES).toBe(1024 * 1024);
  });

  test('a config of exactly the cap is read (the cap is not off by one)', () => {
    const head = `${SERVER}x-pad: "`;
    const file = dir.write('cap.yaml', `${head}${'p'.repeat(MAX_CONFIG_BYTES - head.length - 2)}"\n`);
    expect(loadConfig(file, {}).servers).toHaveLength(1);
  });

  test('a secret file over the cap is refused, naming the key, the file and the cap', () => {
    const secret = dir.write('big-secret', 'x'.repeat(MAX_SECRET_BYTES + 1));
    const error = configErrorOf(() => loadConfig(dir.write('c.yaml', `${SERVER}    bearer_token_file: ${secret}\n`), {}));
    expect(error.problems).toEqual([{ path: 'servers[0].bearer_token_file', line: 4, message: `cannot read ${secret} (larger than the 64KiB cap)` }]);
  });

  test.skipIf(!existsSync('/dev/zero'))('a secret file that never ends (/dev/zero) is refused', () => {
    const error = configErrorOf(() => loadConfig(dir.write('c.yaml', `${SERVER}    username: u\n    password_file: /dev/zero\n`), {}));
    expect(error.problems[0]).toMatchObject({ path: 'servers[0].password_file', message: 'cannot read /dev/zero (larger than the 64KiB cap)' });
  });
});

describe('YAML that expands or repeats', () => {
  test('alias expansion ("billion laughs") is bounded and reported', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) levels.push(`x-${i}: &l${i} [${Array(10).fill(i === 1 ? '*a' : `*l${i - 1}`).join(',')}]`);
    const error = configErrorOf(() => loadConfig(dir.write('laughs.yaml', `${SERVER}${levels.join('\n')}\n`), {}));
    expect(error.problems).toEqual([{ path: '', message: expect.stringMatching(/^YAML: Excessive alias count/) }]);
  });

  test('a duplicate key among 20,000 is found, with its line', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `x-k${i}: v`);
    keys.push('x-k7: again');
    const error = configErrorOf(() => loadConfig(dir.write('dups.yaml', `${SERVER}${keys.join('\n')}\n`), {}));
    expect(error.problems).toEqual([{ path: '', line: 20_004, message: 'YAML syntax, line 20004 column 1: Map keys must be unique' }]);
  });

  test('a file of 20,000 unknown keys shows the first 100 problems and counts the rest', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}: v`);
    const error = configErrorOf(() => loadConfig(dir.write('unknown.yaml', `${SERVER}${keys.join('\n')}\n`), {}));
    expect(error.problems).toHaveLength(101);
    expect(error.problems[0]).toMatchObject({ path: 'k0', line: 4 });
    expect(error.problems[100]).toEqual({ path: '', message: 'and 19900 more problems not shown' });
  });

  test('a config made in code (validateConfig) is cut the same way: the first 100 problems and the count of the rest', () => {
    const keys = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 'v']));
    const error = configErrorOf(() => validateConfig({ servers: [{ name: 'a', url: 'http://h' }], ...keys }, { source: 'demo config', baseDir: '/' }));
    expect(error.problems).toHaveLength(101);
    expect(error.problems[0]).toEqual({ path: 'k0', message: expect.stringMatching(/^unknown key \(known keys: listen_address, /) });
    expect(error.problems[100]).toEqual({ path: '', message: 'and 19900 more problems not shown' });
  });
});
