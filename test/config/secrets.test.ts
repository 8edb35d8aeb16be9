/** Secrets come from the config, a variable or a file, and never appear in an error message. */
import { chmodSync } from 'node:fs';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigDir, configErrorOf } from './config-files.js';

const dir = new ConfigDir();
afterAll(() => dir.cleanup());

const SERVER = 'servers:\n  - name: edge-1\n    url: http://127.0.0.1:8080\n';

describe('secret files', () => {
  test('password_file: trailing newlines trimmed, relative to the config file', () => {
    dir.write('password', 'pa ss\n\n');
    const config = loadConfig(dir.write('c.yaml', `${SERVER}    username: monitor\n    password_file: password\n`), {});
    expect(config.servers[0]!.credentials).toEqual({ kind: 'basic', username: 'monitor', password: 'pa ss' });
  });

  test('bearer_token_file with an absolute path and CRLF ending', () => {
    const token = dir.write('token', 'tok-123\r\n');
    const config = loadConfig(dir.write('c.yaml', `${SERVER}    bearer_token_file: ${token}\n`), {});
    expect(config.servers[0]!.credentials).toEqual({ kind: 'bearer', token: 'tok-123' });
  });

  test('api_key_file of a catena entry', () => {
    const key = dir.write('key', 'catena-key\n');
    const config = loadConfig(dir.write('c.yaml', `catena:\n  - name: c\n    url: http://c\n    api_key_file: ${key}\n`), {});
    expect(config.catena[0]!.apiKey).toBe('catena-key');
  });

  test('an empty secret file is an error with its path', () => {
    const empty = dir.write('empty', '\n');
    const error = configErrorOf(() => loadConfig(dir.write('c.yaml', `${SERVER}    bearer_token_file: ${empty}\n`), {}));
    expect(error.problems).toEqual([{ path: 'servers[0].bearer_token_file', line: 4, message: `${empty} is empty` }]);
  });

  test.skipIf(process.getuid?.() === 0)('an unreadable secret file is an error with its path', () => {
    const locked = dir.write('locked', 'x');
    chmodSync(locked, 0o000);
    const error = configErrorOf(() => loadConfig(dir.write('c.yaml', `${SERVER}    bearer_token_file: ${locked}\n`), {}));
    expect(error.problems[0]!.message).toBe(`cannot read ${locked} (EACCES)`);
  });

  test('a directory where a secret file is expected', () => {
    const error = configErrorOf(() => loadConfig(dir.write('c.yaml', `${SERVER}    bearer_token_file: ${dir.path}\n`), {}));
    expect(error.problems[0]!.message).toBe(`cannot read ${dir.path} (EISDIR)`);
  });

  test('a secret file is re-read on every load (rotation on reload)', () => {
    const file = dir.write('rotating', 'first\n');
    const configPath = dir.write('c.yaml', `${SERVER}    bearer_token_file: ${file}\n`);
    expect(loadConfig(configPath, {}).servers[0]!.credentials).toEqual({ kind: 'bearer', token: 'first' });
    dir.write('rotating', 'second\n');
    expect(loadConfig(configPath, {}).servers[0]!.credentials).toEqual({ kind: 'bearer', token: 'second' });
  });
});

describe('no secret in any error text', () => {
  const SECRET = 'TOPSECRET-4711';
  const cases: { what: string; yaml: string; env?: Record<string, string> }[] = [
    { what: 'URL with userinfo', yaml: `servers:\n  - name: a\n    url: http://admin:${SECRET}@flussonic-1\n` },
    { what: 'URL with a token in the query', yaml: `servers:\n  - name: a\n    url: http://flussonic-1/?token=${SECRET}\n` },
    { what: 'unparsable URL with a password', yaml: `servers:\n  - name: a\n    url: "http://admin:${SECRET}@flussonic 1"\n` },
    { what: 'catena URL with userinfo', yaml: `catena:\n  - name: c\n    url: https://x:${SECRET}@catena\n    api_key: k\n` },
    { what: 'password with a line break', yaml: `${SERVER}    username: u\n    password: "${SECRET}\\nX"\n` },
    { what: 'numeric password', yaml: `${SERVER}    username: u\n    password: 4711\n`, env: {} },
    { what: 'password and bearer token', yaml: `${SERVER}    username: u\n    password: ${SECRET}\n    bearer_token: ${SECRET}\n` },
    { what: 'password without username', yaml: `${SERVER}    password: ${SECRET}\n` },
    { what: 'api key together with api_key_file', yaml: `catena:\n  - name: c\n    url: http://c\n    api_key: ${SECRET}\n    api_key_file: /nonexistent\n` },
    { what: 'secret from a variable in a field that echoes values', yaml: `${SERVER}log_level: \${PW}\npoll_interval: \${PW}\n`, env: { PW: SECRET } },
    { what: 'secret from a variable in a number field', yaml: `${SERVER}    page_size: \${PW}\n`, env: { PW: SECRET } },
    { what: 'secret from a variable in a URL', yaml: `servers:\n  - name: a\n    url: \${URL}\n`, env: { URL: `http://u:${SECRET}@h` } },
    { what: 'password as a list', yaml: `${SERVER}    username: u\n    password: [${SECRET}]\n` },
    { what: 'secret on a line with a YAML syntax error', yaml: `${SERVER}    username: u\n    password: ${SECRET}: x\n` },
    { what: 'secret on a line with an unterminated quote', yaml: `${SERVER}    username: u\n    password: "${SECRET}\n` },
    { what: 'secret after a quoted scalar', yaml: `${SERVER}    username: u\n    password: "x" ${SECRET}\n` },
    { what: 'secret in a block scalar header', yaml: `${SERVER}    username: u\n    password: |${SECRET}\n      x\n` },
    { what: 'secret as an unresolved alias', yaml: `${SERVER}    username: u\n    password: *${SECRET}\n` },
  ];

  test.each(cases)('$what', ({ yaml, env }) => {
    const error = configErrorOf(() => loadConfig(dir.write('c.yaml', yaml), env ?? {}));
    expect(error.problems.length).toBeGreaterThan(0);
    const texts = [error.message, String(error.stack), JSON.stringify(error.problems)];
    for (const text of texts) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('4711');
    }
  });
});
