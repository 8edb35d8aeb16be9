/**
 * Every way a config can be wrong is rejected with the path of the problem and a message that
 * says what is expected. The table is the specification of the validation messages.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { FIXED_ROUTE_PATHS } from '../../src/serve/routes.js';
import { ConfigDir, configErrorOf } from './config-files.js';

const dir = new ConfigDir();
afterAll(() => dir.cleanup());

const SERVER = 'servers:\n  - name: edge-1\n    url: http://127.0.0.1:8080\n';
const CATENA = 'catena:\n  - name: billing\n    url: http://127.0.0.1:8081\n    api_key: k\n';

interface BadCase {
  readonly what: string;
  readonly yaml: string;
  readonly path: string;
  readonly message: RegExp;
  readonly env?: Record<string, string>;
}

const BAD: readonly BadCase[] = [
  { what: 'url with another scheme', yaml: `${SERVER}  - name: edge-2\n    url: ftp://flussonic-2\n`, path: 'servers[1].url', message: /^not an http\(s\) URL/ },
  { what: 'url that is no URL', yaml: 'servers:\n  - name: a\n    url: flussonic 1\n', path: 'servers[0].url', message: /^not an http\(s\) URL$/ },
  { what: 'url with credentials', yaml: 'servers:\n  - name: a\n    url: http://admin:pw@h\n', path: 'servers[0].url', message: /must not contain credentials; use username\/password/ },
  { what: 'url with a query string', yaml: 'servers:\n  - name: a\n    url: http://h/?token=x\n', path: 'servers[0].url', message: /must not have a query string/ },
  { what: 'server without url', yaml: 'servers:\n  - name: a\n', path: 'servers[0].url', message: /^required$/ },
  { what: 'server without name', yaml: 'servers:\n  - url: http://h\n', path: 'servers[0].name', message: /^required$/ },
  { what: 'duplicate server names', yaml: `${SERVER}  - name: edge-1\n    url: http://h2\n`, path: 'servers[1].name', message: /duplicate name "edge-1" \(already used by servers\[0\]\)/ },
  { what: 'duplicate catena names', yaml: `${CATENA}  - name: billing\n    url: http://c2\n    api_key: k\n`, path: 'catena[1].name', message: /duplicate name "billing" \(already used by catena\[0\]\)/ },
  { what: 'unknown top-level key with a typo', yaml: `${SERVER}poll_intervall: 15s\n`, path: 'poll_intervall', message: /^unknown key \(did you mean poll_interval\?\)$/ },
  { what: 'unknown server key with a typo', yaml: `${SERVER}    pasword: x\n`, path: 'servers[0].pasword', message: /^unknown key \(did you mean password\?\)$/ },
  { what: 'a __proto__ key (refused, not taken as the prototype)', yaml: `${SERVER}    __proto__: { username: u }\n`, path: 'servers[0].__proto__', message: /^unknown key \(known keys: name, url, / },
  { what: 'unknown key far from any', yaml: `${SERVER}    colour: blue\n`, path: 'servers[0].colour', message: /^unknown key \(known keys: name, url, / },
  { what: 'misspelt collector', yaml: `${SERVER}    collectors: { stream: false }\n`, path: 'servers[0].collectors.stream', message: /did you mean streams\?/ },
  { what: 'collector switch not boolean', yaml: `${SERVER}    collectors: { dvrs: "yes" }\n`, path: 'servers[0].collectors.dvrs', message: /^expected true or false, got "yes"$/ },
  { what: 'duration without unit', yaml: `${SERVER}    timeout: 10\n`, path: 'servers[0].timeout', message: /is not a duration \(add a unit\)/ },
  { what: 'duration with unknown unit', yaml: `${SERVER}poll_interval: 15x\n`, path: 'poll_interval', message: /^"15x" is not a duration: use a number with a unit, e.g. 500ms, 15s, 2m, 1h$/ },
  { what: 'poll interval of zero', yaml: `${SERVER}poll_interval: 0s\n`, path: 'poll_interval', message: /^must be at least 100ms/ },
  { what: 'timeout not below the poll interval', yaml: `${SERVER}    poll_interval: 5s\n    timeout: 5s\n`, path: 'servers[0].timeout', message: /^5s must be below the poll interval \(5s\)/ },
  { what: 'explicit timeout above a short global interval', yaml: `${SERVER}    timeout: 3s\npoll_interval: 2s\n`, path: 'servers[0].timeout', message: /^3s must be below the poll interval \(2s\)/ },
  { what: 'log level', yaml: `${SERVER}log_level: verbose\n`, path: 'log_level', message: /^expected one of debug, info, warn, error, got "verbose"$/ },
  { what: 'listen address without port', yaml: `${SERVER}listen_address: localhost\n`, path: 'listen_address', message: /is not HOST:PORT/ },
  { what: 'listen port out of range', yaml: `${SERVER}listen_address: ":70000"\n`, path: 'listen_address', message: /^port 70000 is out of range/ },
  { what: 'metrics path without slash', yaml: `${SERVER}metrics_path: metrics\n`, path: 'metrics_path', message: /^must be a path like \/metrics/ },
  { what: 'metrics path on the health endpoint', yaml: `${SERVER}metrics_path: /-/healthy\n`, path: 'metrics_path', message: /other than/ },
  { what: 'metrics path with an empty segment', yaml: `${SERVER}metrics_path: //m\n`, path: 'metrics_path', message: /^must be a path like \/metrics: "\/" then segments .*; got "\/\/m"$/ },
  { what: 'metrics path an event sink would take', yaml: `${SERVER}metrics_path: /events/edge-1\n`, path: 'metrics_path', message: /, which the route \/events\/:server takes$/ },
  { what: 'workers negative', yaml: `workers: -1\n${SERVER}`, path: 'workers', message: /^must be between 0 and 256, got -1$/ },
  { what: 'workers too many', yaml: `workers: 257\n${SERVER}`, path: 'workers', message: /^must be between 0 and 256, got 257$/ },
  { what: 'page size zero', yaml: `${SERVER}    page_size: 0\n`, path: 'servers[0].page_size', message: /^must be between 1 and 100000, got 0$/ },
  { what: 'page size not an integer', yaml: `${SERVER}    page_size: 10.5\n`, path: 'servers[0].page_size', message: /^expected an integer, got a number \(10.5\)$/ },
  { what: 'max_series negative', yaml: `${SERVER}    max_series: -1\n`, path: 'servers[0].max_series', message: /^must be between 1 and/ },
  { what: 'max_response_size not a size', yaml: `${SERVER}    max_response_size: big\n`, path: 'servers[0].max_response_size', message: /is not a size/ },
  { what: 'api prefix without slash', yaml: `${SERVER}    api_prefix: streamer/api/v3\n`, path: 'servers[0].api_prefix', message: /^must be a path starting with \// },
  { what: 'invalid include regex', yaml: `${SERVER}    streams: { include: "edge-(" }\n`, path: 'servers[0].streams.include', message: /^invalid regular expression: / },
  { what: 'unbalanced exclude regex', yaml: `${SERVER}    streams: { exclude: "a)|(b" }\n`, path: 'servers[0].streams.exclude', message: /^invalid regular expression: / },
  { what: 'unknown family switch', yaml: `${SERVER}    families: { track: false }\n`, path: 'servers[0].families.track', message: /did you mean tracks\?/ },
  { what: 'sessions group_by label not allowed', yaml: `${SERVER}    sessions: { group_by: [stream, ip] }\n`, path: 'servers[0].sessions.group_by[1]', message: /^expected one of stream, proto, country, dvr, secure, segments_container, manifest_type, got "ip"$/ },
  { what: 'sessions group_by label twice', yaml: `${SERVER}    sessions: { group_by: [proto, proto] }\n`, path: 'servers[0].sessions.group_by[1]', message: /^proto is listed twice$/ },
  { what: 'password without username', yaml: `${SERVER}    password: pw\n`, path: 'servers[0].password', message: /^needs username too$/ },
  { what: 'username without password', yaml: `${SERVER}    username: monitor\n`, path: 'servers[0].username', message: /^needs password or password_file too$/ },
  { what: 'password and password_file', yaml: `${SERVER}    username: u\n    password: pw\n    password_file: /x\n`, path: 'servers[0].password_file', message: /^set either password or password_file, not both$/ },
  { what: 'basic and bearer together', yaml: `${SERVER}    username: u\n    password: pw\n    bearer_token: t\n`, path: 'servers[0].bearer_token', message: /not both/ },
  { what: 'unreadable password file', yaml: `${SERVER}    username: u\n    password_file: /nonexistent/flussonic-password\n`, path: 'servers[0].password_file', message: /^cannot read \/nonexistent\/flussonic-password \(ENOENT\)$/ },
  { what: 'missing environment variable', yaml: `${SERVER}    username: u\n    password: \${FLUSSONIC_PASSWORD_UNSET}\n`, path: 'servers[0].password', message: /^environment variable FLUSSONIC_PASSWORD_UNSET is not set$/ },
  { what: 'malformed variable reference', yaml: `${SERVER}    username: \${1X}\n    password: p\n`, path: 'servers[0].username', message: /is not a valid variable reference/ },
  { what: 'no targets at all', yaml: 'log_level: info\n', path: '', message: /^nothing to poll/ },
  { what: 'empty servers list', yaml: 'servers: []\n', path: 'servers', message: /^nothing to poll: the list is empty/ },
  { what: 'servers not a list', yaml: 'servers:\n  name: a\n  url: http://h\n', path: 'servers', message: /^expected a list, got a mapping$/ },
  { what: 'server entry not a mapping', yaml: 'servers:\n  - edge-1\n', path: 'servers[0]', message: /^expected a mapping \(key: value\), got a string$/ },
  { what: 'catena without api key', yaml: 'catena:\n  - name: c\n    url: http://c\n', path: 'catena[0].api_key', message: /^required \(or api_key_file\)/ },
  { what: 'catena start not now or duration', yaml: `${CATENA}    start: yesterday\n`, path: 'catena[0].start', message: /^expected now or a positive duration of history \(e.g. 24h\), got "yesterday"$/ },
  { what: 'catena query parameter name', yaml: `${CATENA}    query: { created_from: "created at" }\n`, path: 'catena[0].query.created_from', message: /is not a query parameter name/ },
  { what: 'catena price amount negative', yaml: `${CATENA}    prices:\n      pkg-basic: { amount: -1, per: 30d, currency: EUR }\n`, path: 'catena[0].prices.pkg-basic.amount', message: /^must be at least 0, got -1$/ },
  { what: 'catena price without period', yaml: `${CATENA}    prices:\n      pkg-basic: { amount: 9.99, currency: EUR }\n`, path: 'catena[0].prices.pkg-basic.per', message: /^required$/ },
  { what: 'catena unknown price key', yaml: `${CATENA}    prices:\n      pkg-basic: { amount: 9.99, per: 30d, currency: EUR, vat: 0.2 }\n`, path: 'catena[0].prices.pkg-basic.vat', message: /^unknown key/ },
  { what: 'catena timeout not below interval', yaml: `${CATENA}    poll_interval: 10s\n    timeout: 10s\n`, path: 'catena[0].timeout', message: /^10s must be below the poll interval \(10s\)/ },
];

describe('a bad config is rejected with the path of the problem', () => {
  test('the table has at least 20 cases', () => {
    expect(BAD.length).toBeGreaterThanOrEqual(20);
  });

  test.each(BAD)('$what -> $path', ({ yaml, path, message, env }) => {
    const file = dir.write('config.yaml', yaml);
    const error = configErrorOf(() => loadConfig(file, env ?? {}, { reservedPaths: FIXED_ROUTE_PATHS }));
    const problem = error.problems.find((p) => p.path === path);
    expect(problem, `problems were: ${error.message}`).toBeDefined();
    expect(problem!.message).toMatch(message);
    expect(error.message).toContain(path === '' ? problem!.message : `${path}: ${problem!.message}`);
  });
});

describe('validation reports every problem at once', () => {
  test('four independent problems in one file are all reported, in file order, with lines', () => {
    const file = dir.write(
      'many.yaml',
      [
        'log_level: loud',
        'servers:',
        '  - name: a',
        '    url: gopher://h',
        '    page_size: -5',
        '  - name: a',
        '    url: http://h',
        '    colectors: {}',
      ].join('\n'),
    );
    const error = configErrorOf(() => loadConfig(file, {}));
    expect(error.problems.map((p) => [p.path, p.line])).toEqual([
      ['log_level', 1],
      ['servers[0].url', 4],
      ['servers[0].page_size', 5],
      ['servers[1].name', 6],
      ['servers[1].colectors', 8],
    ]);
    expect(error.problems[4]!.message).toBe('unknown key (did you mean collectors?)');
  });

  test('a failed ${VAR} is reported once, not again as an empty value', () => {
    const file = dir.write('env.yaml', `${CATENA.replace('api_key: k', 'api_key: ${CATENA_KEY_UNSET}')}`);
    const error = configErrorOf(() => loadConfig(file, {}));
    expect(error.problems).toEqual([{ path: 'catena[0].api_key', line: 4, message: 'environment variable CATENA_KEY_UNSET is not set' }]);
  });
});

describe('bad YAML is reported with its line', () => {
  test('a syntax error names line and column', () => {
    const file = dir.write('syntax.yaml', 'servers:\n  - name: a\n    url: http: //h\n');
    const error = configErrorOf(() => loadConfig(file, {}));
    expect(error.problems[0]!.line).toBe(3);
    expect(error.problems[0]!.message).toMatch(/^YAML syntax, line \d+ column \d+: /);
  });

  test('a duplicate key is an error with its line', () => {
    const file = dir.write('dup.yaml', `${SERVER}log_level: info\nlog_level: debug\n`);
    const error = configErrorOf(() => loadConfig(file, {}));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]!).toMatchObject({ line: 5, message: 'YAML syntax, line 5 column 1: Map keys must be unique' });
  });

  test('a config that is not a mapping', () => {
    const file = dir.write('list.yaml', '- a\n- b\n');
    expect(configErrorOf(() => loadConfig(file, {})).problems[0]).toMatchObject({ path: '', message: 'expected a mapping (key: value), got a list' });
  });

  test('a missing config file names the file and the reason', () => {
    const error = configErrorOf(() => loadConfig(`${dir.path}/absent.yaml`, {}));
    expect(error.message).toBe(`${dir.path}/absent.yaml: cannot read the config file (ENOENT)`);
  });
});
