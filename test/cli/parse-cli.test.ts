/** Arguments to commands, in-process (the spawned-process tests are in main.test.ts). */
import { describe, expect, test } from 'vitest';
import { applyOverrides, DEMO_LISTEN_ADDRESS, listenAddresses, parseCli, UsageError, CONFIG_ENV, EXTERNAL_ADDRESS_ENV } from '../../src/cli.js';
import { DEFAULT_LIMITS } from '../../src/serve/limits.js';
import { validateConfig } from '../../src/config/index.js';

const NO_ENV = {};

describe('parseCli', () => {
  test('--config FILE runs from that file', () => {
    expect(parseCli(['--config', 'a.yaml'], NO_ENV)).toEqual({ kind: 'run', source: { kind: 'file', path: 'a.yaml' }, overrides: {}, web: { limits: DEFAULT_LIMITS } });
    expect(parseCli(['-c', 'a.yaml'], NO_ENV)).toMatchObject({ source: { path: 'a.yaml' } });
    expect(parseCli(['--config=a.yaml'], NO_ENV)).toMatchObject({ source: { path: 'a.yaml' } });
  });

  test(`${CONFIG_ENV} names the config when --config is absent; the flag wins`, () => {
    expect(parseCli([], { [CONFIG_ENV]: '/etc/fe.yaml' })).toMatchObject({ source: { kind: 'file', path: '/etc/fe.yaml' } });
    expect(parseCli(['--config', 'b.yaml'], { [CONFIG_ENV]: '/etc/fe.yaml' })).toMatchObject({ source: { path: 'b.yaml' } });
  });

  test('no config and no --demo is a usage error saying how to start', () => {
    expect(() => parseCli([], NO_ENV)).toThrow(UsageError);
    expect(() => parseCli([], { [CONFIG_ENV]: ' ' })).toThrow(/--config FILE.*FLUSSONIC_EXPORTER_CONFIG.*--demo/);
  });

  test('--demo runs the demo, also when the variable names a config', () => {
    expect(parseCli(['--demo'], NO_ENV)).toEqual({ kind: 'run', source: { kind: 'demo', shape: 'nested' }, overrides: { listenAddresses: [DEMO_LISTEN_ADDRESS] }, web: { limits: DEFAULT_LIMITS } });
    expect(parseCli(['--demo'], { [CONFIG_ENV]: '/etc/fe.yaml' })).toMatchObject({ source: { kind: 'demo' } });
  });

  test('--demo-shape chooses the stats shape of the demo (default nested); alone or misspelt it is refused', () => {
    expect(parseCli(['--demo', '--demo-shape', 'flat'], NO_ENV)).toMatchObject({ source: { kind: 'demo', shape: 'flat' } });
    expect(parseCli(['--demo', '--demo-shape=nested'], NO_ENV)).toMatchObject({ source: { kind: 'demo', shape: 'nested' } });
    expect(() => parseCli(['--demo', '--demo-shape', 'Flat'], NO_ENV)).toThrow(/^--demo-shape: expected one of nested, flat, got "Flat"$/);
    expect(() => parseCli(['--config', 'a.yaml', '--demo-shape', 'flat'], NO_ENV)).toThrow(/--demo-shape .*add --demo/);
  });

  test('--demo-full is the demo with every switch on (the full tour); --demo alone says nothing of it', () => {
    expect(parseCli(['--demo-full'], NO_ENV)).toMatchObject({ kind: 'run', source: { kind: 'demo', shape: 'nested', full: true }, overrides: { listenAddresses: [DEMO_LISTEN_ADDRESS] } });
    expect(parseCli(['--demo', '--demo-full', '--demo-shape', 'flat'], NO_ENV)).toMatchObject({ source: { kind: 'demo', shape: 'flat', full: true } });
    expect((parseCli(['--demo'], NO_ENV) as { source: object }).source).not.toHaveProperty('full');
    expect(() => parseCli(['--demo-full', '--config', 'a.yaml'], NO_ENV)).toThrow(/exclude each other/);
  });

  test('--demo with --config is refused (the demo never mixes with real targets)', () => {
    expect(() => parseCli(['--demo', '--config', 'a.yaml'], NO_ENV)).toThrow(/exclude each other/);
  });

  test('--check-config needs a config file', () => {
    expect(parseCli(['--check-config', '--config', 'a.yaml'], NO_ENV)).toEqual({ kind: 'check', configPath: 'a.yaml' });
    expect(parseCli(['--check-config'], { [CONFIG_ENV]: 'e.yaml' })).toEqual({ kind: 'check', configPath: 'e.yaml' });
    expect(() => parseCli(['--check-config'], NO_ENV)).toThrow(/needs --config FILE/);
    expect(() => parseCli(['--check-config', '--demo'], NO_ENV)).toThrow(UsageError);
  });

  test('overrides are parsed and validated', () => {
    expect(parseCli(['--demo', '--listen-address', '127.0.0.1:0', '--log-level', 'debug'], NO_ENV)).toMatchObject({
      overrides: { listenAddresses: [{ host: '127.0.0.1', port: 0 }], logLevel: 'debug' },
    });
    expect(() => parseCli(['--demo', '--listen-address', 'nine'], NO_ENV)).toThrow(/^--web.listen-address: "nine" is not HOST:PORT/);
    expect(() => parseCli(['--demo', '--log-level', 'trace'], NO_ENV)).toThrow(/^--log-level: expected one of debug, info, warn, error/);
  });

  test('help, version and the simulate subcommand', () => {
    expect(parseCli(['--help'], NO_ENV)).toEqual({ kind: 'help' });
    expect(parseCli(['-h', '--demo'], NO_ENV)).toEqual({ kind: 'help' });
    expect(parseCli(['--version'], NO_ENV)).toEqual({ kind: 'version' });
    expect(parseCli(['simulate', '--port', '8080', '--streams', '5'], NO_ENV)).toEqual({ kind: 'simulate', argv: ['--port', '8080', '--streams', '5'] });
  });

  test('unknown options and stray arguments are usage errors', () => {
    expect(() => parseCli(['--conifg', 'a.yaml'], NO_ENV)).toThrow(UsageError);
    expect(() => parseCli(['a.yaml'], NO_ENV)).toThrow(UsageError);
    expect(() => parseCli(['--config'], NO_ENV)).toThrow(UsageError);
  });
});

test('overrides win over the file', () => {
  const config = validateConfig({ listen_address: ':9228', log_level: 'info', servers: [{ name: 'a', url: 'http://h' }] }, { source: 't', baseDir: '/' });
  const overrides = { listenAddresses: [{ host: '127.0.0.1', port: 1 }, { host: '::1', port: 2 }], metricsPath: '/m', logLevel: 'error' } as const;
  const overridden = applyOverrides(config, overrides);
  expect(overridden.listenAddress).toEqual({ host: '127.0.0.1', port: 1 });
  expect(overridden.metricsPath).toBe('/m');
  expect(overridden.logLevel).toBe('error');
  expect(listenAddresses(overridden, overrides)).toEqual(overrides.listenAddresses);
  expect(applyOverrides(config, {})).toEqual(config);
  expect(listenAddresses(config, {})).toEqual([{ host: '0.0.0.0', port: 9228 }]);
});

describe('the ecosystem flags (exporter-toolkit spelling)', () => {
  test('--web.listen-address is repeatable and --listen-address is its alias', () => {
    const cmd = parseCli(['--config', 'a.yaml', '--web.listen-address', '127.0.0.1:9228', '--listen-address', '[::1]:9229', '--web.listen-address=:9300'], NO_ENV);
    expect(cmd).toMatchObject({ overrides: { listenAddresses: [{ host: '127.0.0.1', port: 9228 }, { host: '0.0.0.0', port: 9300 }, { host: '::1', port: 9229 }] } });
    expect(() => parseCli(['--config', 'a.yaml', '--web.listen-address', ':9228', '--web.listen-address', ':9228'], NO_ENV)).toThrow(/0.0.0.0:9228 is given twice/);
  });

  test('the demo listens on 127.0.0.1:9228 unless told otherwise', () => {
    expect(parseCli(['--demo'], NO_ENV)).toMatchObject({ overrides: { listenAddresses: [{ host: '127.0.0.1', port: 9228 }] } });
    expect(parseCli(['--demo', '--web.listen-address', ':9228'], NO_ENV)).toMatchObject({ overrides: { listenAddresses: [{ host: '0.0.0.0', port: 9228 }] } });
  });

  test('--web.telemetry-path, --web.config.file, --web.max-requests and the limits', () => {
    const cmd = parseCli(
      ['--config', 'a.yaml', '--web.telemetry-path', '/x/metrics', '--web.config.file', 'web.yml', '--web.max-requests', '3', '--web.max-connections', '20', '--web.read-header-timeout', '2s', '--web.idle-timeout', '500ms', '--web.request-timeout', '1m'],
      NO_ENV,
    );
    expect(cmd).toEqual({
      kind: 'run',
      source: { kind: 'file', path: 'a.yaml' },
      overrides: { metricsPath: '/x/metrics' },
      web: { configFile: 'web.yml', limits: { maxRequests: 3, maxConnections: 20, readHeaderTimeoutMs: 2000, idleTimeoutMs: 500, requestTimeoutMs: 60_000 } },
    });
    expect(parseCli(['--check-config', '-c', 'a.yaml', '--web.config.file', 'w.yml'], NO_ENV)).toEqual({ kind: 'check', configPath: 'a.yaml', webConfigFile: 'w.yml' });
  });

  test('bad values are usage errors naming the flag', () => {
    const bad = (args: string[], message: RegExp) => expect(() => parseCli(['--demo', ...args], NO_ENV)).toThrow(message);
    bad(['--web.telemetry-path', 'metrics'], /^--web.telemetry-path: must be a path like \/metrics/);
    bad(['--web.telemetry-path', '/-/ready'], /^--web.telemetry-path: must be a path/);
    // One clean absolute path: what is served is what the landing page links (`//m` would be a host).
    for (const path of ['//m', '/m//', '/a//b', '/./m', '/m/..', '/m?x=1', '/m#x', '/m%2F', '/', '/m n']) bad(['--web.telemetry-path', path], /^--web.telemetry-path: must be a path like \/metrics: "\/" then segments/);
    // A path another route would take, parametric ones included.
    bad(['--web.telemetry-path', '/events/edge-1'], /^--web.telemetry-path: must be a path like \/metrics, other than .*\/events\/:server; got "\/events\/edge-1", which the route \/events\/:server takes$/);
    bad(['--web.telemetry-path', '/probe'], /^--web.telemetry-path: must be a path like \/metrics, other than .*; got "\/probe"$/);
    // A trailing slash is taken (the router ignores it), so it does not free another route's path.
    bad(['--web.telemetry-path', '/probe/'], /^--web.telemetry-path: must be a path like \/metrics, other than .*; got "\/probe\/", which the route \/probe takes$/);
    for (const path of ['/events', '/events/a/metrics', '/probe/metrics', '/-/metrics', '/m.prom', '/.well-known/m', '/metrics/']) {
      expect(parseCli(['--demo', '--web.telemetry-path', path], NO_ENV), path).toMatchObject({ overrides: { metricsPath: path } });
    }
    bad(['--web.max-requests', '0'], /^--web.max-requests: expected a whole number of at least 1, got "0"/);
    bad(['--web.max-connections', 'many'], /^--web.max-connections: expected a whole number/);
    bad(['--web.read-header-timeout', '10'], /^--web.read-header-timeout: expected a duration like 10s/);
    bad(['--web.config.file', ''], /^--web.config.file: empty path/);
  });
});

describe('--web.external-address: where Prometheus reaches this replica (/sd)', () => {
  test(`takes HOST:PORT, else ${EXTERNAL_ADDRESS_ENV}; the flag wins`, () => {
    const web = (args: string[], env: Record<string, string> = {}) => (parseCli(['--config', 'a.yaml', ...args], env) as { web: { externalAddress?: string } }).web.externalAddress;
    expect(web([])).toBeUndefined();
    expect(web(['--web.external-address', 'flussonic-exporter-0.flussonic-exporter-headless.monitoring.svc:9228'])).toBe('flussonic-exporter-0.flussonic-exporter-headless.monitoring.svc:9228');
    expect(web(['--web.external-address=10.0.0.7:9228'])).toBe('10.0.0.7:9228');
    expect(web(['--web.external-address', '[fd00::7]:9228'])).toBe('[fd00::7]:9228');
    expect(web([], { [EXTERNAL_ADDRESS_ENV]: 'pod-1.svc:9228' })).toBe('pod-1.svc:9228');
    expect(web([], { [EXTERNAL_ADDRESS_ENV]: ' ' })).toBeUndefined();
    expect(web(['--web.external-address', 'a:1'], { [EXTERNAL_ADDRESS_ENV]: 'b:2' })).toBe('a:1');
  });

  test('refuses what is no address to scrape, naming the flag or the variable', () => {
    for (const bad of ['http://x:9228', 'x', ':9228', 'x:0', 'x:70000', '0.0.0.0:9228', '[::]:9228', 'x:9228/sd', 'user@x:9228']) {
      expect(() => parseCli(['--demo', '--web.external-address', bad], NO_ENV), bad).toThrow(/^--web.external-address: /);
    }
    expect(() => parseCli(['--demo'], { [EXTERNAL_ADDRESS_ENV]: 'x' })).toThrow(new RegExp(`^\\$${EXTERNAL_ADDRESS_ENV}: `));
  });
});
