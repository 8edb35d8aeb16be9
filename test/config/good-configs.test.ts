/** Valid configs come out complete: every default applied, units converted, paths resolved. */
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { COLLECTORS } from '../../src/collect/index.js';
import { compileStreamFilter, loadConfig, namePatternMatches, validateConfig, type ExporterConfig } from '../../src/config/index.js';
import { ConfigDir } from './config-files.js';
import { usableCpus } from '../../src/lib/cpu-limit.js';

const dir = new ConfigDir();

/** The switch of every collector in the table defaults to its defaultEnabled; others are off. */
const DEFAULT_SWITCHES = Object.fromEntries(
  (['streams', 'sessions', 'server', 'dvrs', 'cluster'] as const).map((name) => [name, COLLECTORS.find((c) => c.name === name)?.defaultEnabled ?? false]),
);
afterAll(() => dir.cleanup());

function load(yaml: string, env: Record<string, string> = {}): ExporterConfig {
  return loadConfig(dir.write('config.yaml', yaml), env);
}

describe('defaults', () => {
  test('workers: one per available core by default, or as set (0: polls on the serving thread)', () => {
    expect(load('workers: 3\nservers:\n  - name: e\n    url: http://f\n').workers).toBe(3);
    expect(load('workers: 0\nservers:\n  - name: e\n    url: http://f\n').workers).toBe(0);
  });

  test('a server with only name and url gets every default', () => {
    const config = load('servers:\n  - name: edge-1\n    url: http://flussonic-1:80/\n');
    expect(config).toEqual({
      listenAddress: { host: '0.0.0.0', port: 9228 },
      metricsPath: '/metrics',
      logLevel: 'info',
      pollIntervalMs: 15_000,
      workers: usableCpus(),
      catena: [],
      servers: [
        {
          name: 'edge-1',
          url: 'http://flussonic-1',
          apiPrefix: '/streamer/api/v3',
          credentials: { kind: 'none' },
          timeoutMs: 10_000,
          pollIntervalMs: 15_000,
          pageSize: 1000,
          maxPages: 10_000,
          maxResponseBytes: 64 * 1024 * 1024,
          collectors: DEFAULT_SWITCHES,
          streams: {},
          // The default budget: every optional family group off (docs/cardinality.md).
          families: {
            tracks: false,
            transcoder_tracks: false,
            pushes: false,
            input_errors: false,
            inputs: false,
            details: false,
            transcoder: false,
            dvr: false,
          },
          maxSeries: 500_000,
          staleAfterMs: 600_000,
          sessionsGroupBy: ['stream', 'proto'],
        },
      ],
    });
  });

  test('collector switches default to the collector table', () => {
    expect(COLLECTORS.length).toBeGreaterThan(0);
    const { collectors } = load('servers:\n  - name: a\n    url: http://h\n').servers[0]!;
    for (const entry of COLLECTORS) expect(collectors[entry.name], entry.name).toBe(entry.defaultEnabled);
  });

  test('a catena-only config is valid and every catena setting gets its default', () => {
    const config = load('catena:\n  - name: main\n    url: https://catena.example/\n    api_key: k1\n');
    expect(config.servers).toEqual([]);
    expect(config.catena).toEqual([
      {
        name: 'main',
        url: 'https://catena.example',
        apiKey: 'k1',
        pollIntervalMs: 60_000,
        timeoutMs: 10_000,
        pageSize: 500,
        maxPages: 10_000,
        maxResponseBytes: 64 * 1024 * 1024,
        start: { kind: 'now' },
        maxClockSkewMs: 300_000,
        query: { type: 'type', createdFrom: 'createdAt_gte', createdBefore: 'createdAt_lt', subscriber: 'subscriberId' },
        prices: new Map(),
      },
    ]);
  });
});

describe('every option set', () => {
  test('a server with every option', () => {
    const config = load(`
listen_address: "127.0.0.1:9300"
metrics_path: /probe/metrics
log_level: debug
poll_interval: 1m
servers:
  - name: edge-1
    url: https://flussonic-1.example:8443/base/
    api_prefix: /flussonic/api/v3/
    bearer_token: tok
    timeout: 1500ms
    poll_interval: 2s
    page_size: 250
    max_pages: 40
    max_response_size: 8MiB
    collectors: { streams: true, sessions: false, server: true, dvrs: false }
    streams: { include: "edge-.*", exclude: ".*-test" }
    families: { tracks: false, pushes: true, input_errors: false, transcoder_tracks: true, inputs: true, dvr: true }
    max_series: 5000
    stale_after: 30m
    sessions: { group_by: [country, proto] }
  - name: edge-2
    url: http://[::1]:81
`);
    expect(config.listenAddress).toEqual({ host: '127.0.0.1', port: 9300 });
    expect(config.metricsPath).toBe('/probe/metrics');
    expect(config.logLevel).toBe('debug');
    expect(config.pollIntervalMs).toBe(60_000);
    const [edge1, edge2] = config.servers;
    expect(edge1).toMatchObject({
      url: 'https://flussonic-1.example:8443/base',
      apiPrefix: '/flussonic/api/v3',
      credentials: { kind: 'bearer', token: 'tok' },
      timeoutMs: 1500,
      pollIntervalMs: 2000,
      pageSize: 250,
      maxPages: 40,
      maxResponseBytes: 8 * 1024 * 1024,
      collectors: { streams: true, sessions: false, server: true, dvrs: false },
      families: { tracks: false, pushes: true, input_errors: false, transcoder_tracks: true, inputs: true, dvr: true, details: false },
      maxSeries: 5000,
      staleAfterMs: 30 * 60_000,
      sessionsGroupBy: ['country', 'proto'],
    });
    expect(edge2!.url).toBe('http://[::1]:81');
    expect(edge2!.pollIntervalMs).toBe(60_000);
  });

  test('stream include/exclude regexes match whole names', () => {
    const [server] = load('servers:\n  - name: a\n    url: http://h\n    streams: { include: "edge-.*", exclude: ".*-test" }\n').servers;
    const { include, exclude } = server!.streams;
    expect(server!.streams).toEqual({ include: { source: 'edge-.*' }, exclude: { source: '.*-test' } });
    expect(namePatternMatches(include!, 'edge-1')).toBe(true);
    expect(namePatternMatches(include!, 'my-edge-1')).toBe(false);
    expect(namePatternMatches(exclude!, 'edge-1-test')).toBe(true);
    expect(namePatternMatches(exclude!, 'edge-1-testing')).toBe(false);
    const passes = compileStreamFilter(server!.streams);
    expect(['edge-1', 'edge-1-test', 'core-1'].filter(passes)).toEqual(['edge-1']);
  });

  test('a catena entry with a key file, a history start, a state file, query names and prices loads as written', () => {
    dir.write('catena-key', 'key-from-file\n');
    const config = load(`
catena:
  - name: main
    url: http://catena.example
    api_key_file: catena-key
    poll_interval: 60s
    timeout: 10s
    page_size: 500
    start: 24h
    state_file: state/catena-main.json
    query:
      type: type
      created_from: createdAt_gte
      created_before: createdAt_lt
      subscriber: subscriberId
    prices:
      pkg-basic: { amount: 9.99, per: 30d, currency: EUR }
      42: { amount: 0, per: 1h, currency: credits }
`);
    const [catena] = config.catena;
    expect(catena).toMatchObject({ apiKey: 'key-from-file', start: { kind: 'history', ms: 86_400_000 }, stateFile: join(dir.path, 'state/catena-main.json') });
    expect([...catena!.prices]).toEqual([
      ['42', { amount: 0, perMs: 3_600_000, currency: 'credits' }],
      ['pkg-basic', { amount: 9.99, perMs: 30 * 86_400_000, currency: 'EUR' }],
    ]);
  });

  test('a server and a catena entry may share a name (their labels differ)', () => {
    const config = load('servers:\n  - name: demo\n    url: http://h\ncatena:\n  - name: demo\n    url: http://c\n    api_key: k\n');
    expect([config.servers[0]!.name, config.catena[0]!.name]).toEqual(['demo', 'demo']);
  });

  test('listen addresses: any host, IPv6, ephemeral port', () => {
    const at = (address: string): ExporterConfig['listenAddress'] => load(`listen_address: "${address}"\ncatena: [{ name: c, url: "http://c", api_key: k }]\n`).listenAddress;
    expect(at(':9228')).toEqual({ host: '0.0.0.0', port: 9228 });
    expect(at('[::]:9228')).toEqual({ host: '::', port: 9228 });
    expect(at('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
  });

  test('durations: units and compounds', () => {
    const interval = (text: string): number => load(`poll_interval: ${text}\ncatena: [{ name: c, url: "http://c", api_key: k, poll_interval: 1h }]\n`).pollIntervalMs;
    expect(interval('500ms')).toBe(500);
    expect(interval('15s')).toBe(15_000);
    expect(interval('2m')).toBe(120_000);
    expect(interval('1h')).toBe(3_600_000);
    expect(interval('1m30s')).toBe(90_000);
    expect(interval('1.5s')).toBe(1500);
  });
});

describe('shared settings', () => {
  test('x- keys hold anchors that servers merge with <<', () => {
    const config = load(`
x-edge: &edge
  username: monitor
  password: pw
  timeout: 5s
servers:
  - <<: *edge
    name: edge-1
    url: http://flussonic-1
  - <<: *edge
    name: edge-2
    url: http://flussonic-2
    timeout: 3s
`);
    expect(config.servers.map((s) => [s.name, s.timeoutMs, s.credentials])).toEqual([
      ['edge-1', 5000, { kind: 'basic', username: 'monitor', password: 'pw' }],
      ['edge-2', 3000, { kind: 'basic', username: 'monitor', password: 'pw' }],
    ]);
  });

  test('an unknown key merged in from an anchor is still reported', () => {
    expect(() => load('x-edge: &edge\n  colour: red\nservers:\n  - <<: *edge\n    name: a\n    url: http://h\n')).toThrow('servers[0].colour: unknown key');
  });
});

describe('environment variables', () => {
  test('${VAR} expands in any string, $${ is a literal', () => {
    const config = load('servers:\n  - name: ${EDGE}\n    url: http://${HOST}:80\n    username: monitor\n    password: "pre-${PW}-$${NOT_A_VAR}"\n', {
      EDGE: 'edge-7',
      HOST: 'flussonic-7',
      PW: 'p@ss',
    });
    expect(config.servers[0]).toMatchObject({ name: 'edge-7', url: 'http://flussonic-7', credentials: { kind: 'basic', username: 'monitor', password: 'pre-p@ss-${NOT_A_VAR}' } });
  });

  test('numbers and booleans may come from variables', () => {
    const config = load('servers:\n  - name: a\n    url: http://h\n    page_size: ${PAGE}\n    collectors: { dvrs: "${DVRS}" }\n', { PAGE: '200', DVRS: 'false' });
    expect(config.servers[0]!.pageSize).toBe(200);
    expect(config.servers[0]!.collectors.dvrs).toBe(false);
  });

  test('an empty variable is set', () => {
    const config = load('servers:\n  - name: a${SUFFIX}\n    url: http://h\n', { SUFFIX: '' });
    expect(config.servers[0]!.name).toBe('a');
  });

  test('loadConfig reads process.env by default', () => {
    process.env.FE_TEST_SERVER_NAME = 'from-process-env';
    try {
      const config = loadConfig(dir.write('penv.yaml', 'servers:\n  - name: ${FE_TEST_SERVER_NAME}\n    url: http://h\n'));
      expect(config.servers[0]!.name).toBe('from-process-env');
    } finally {
      delete process.env.FE_TEST_SERVER_NAME;
    }
  });
});

describe('in-memory configs go through the same validation', () => {
  test('validateConfig accepts a plain object', () => {
    const config = validateConfig({ servers: [{ name: 'demo', url: 'http://127.0.0.1:1' }] }, { source: 'demo config', baseDir: '/' });
    expect(config.servers[0]!.name).toBe('demo');
  });

  test('validateConfig throws for a bad object, naming its source', () => {
    expect(() => validateConfig({ servers: [{ name: 'demo' }] }, { source: 'demo config', baseDir: '/' })).toThrow('demo config: servers[0].url: required');
  });
});
