/** Arguments to commands, in-process (the spawned-process tests are in main.test.ts). */
import { describe, expect, test } from 'vitest';
import { applyOverrides, parseCli, UsageError, CONFIG_ENV } from '../../src/cli.js';
import { validateConfig } from '../../src/config/index.js';

const NO_ENV = {};

describe('parseCli', () => {
  test('--config FILE runs from that file', () => {
    expect(parseCli(['--config', 'a.yaml'], NO_ENV)).toEqual({ kind: 'run', source: { kind: 'file', path: 'a.yaml' }, overrides: {} });
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
    expect(parseCli(['--demo'], NO_ENV)).toEqual({ kind: 'run', source: { kind: 'demo', shape: 'nested' }, overrides: {} });
    expect(parseCli(['--demo'], { [CONFIG_ENV]: '/etc/fe.yaml' })).toMatchObject({ source: { kind: 'demo' } });
  });

  test('--demo-shape chooses the stats shape of the demo (default nested); alone or misspelt it is refused', () => {
    expect(parseCli(['--demo', '--demo-shape', 'flat'], NO_ENV)).toMatchObject({ source: { kind: 'demo', shape: 'flat' } });
    expect(parseCli(['--demo', '--demo-shape=nested'], NO_ENV)).toMatchObject({ source: { kind: 'demo', shape: 'nested' } });
    expect(() => parseCli(['--demo', '--demo-shape', 'Flat'], NO_ENV)).toThrow(/^--demo-shape: expected one of nested, flat, got "Flat"$/);
    expect(() => parseCli(['--config', 'a.yaml', '--demo-shape', 'flat'], NO_ENV)).toThrow(/--demo-shape .*add --demo/);
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
      overrides: { listenAddress: { host: '127.0.0.1', port: 0 }, logLevel: 'debug' },
    });
    expect(() => parseCli(['--demo', '--listen-address', 'nine'], NO_ENV)).toThrow(/^--listen-address: "nine" is not HOST:PORT/);
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
  const overridden = applyOverrides(config, { listenAddress: { host: '127.0.0.1', port: 1 }, logLevel: 'error' });
  expect(overridden.listenAddress).toEqual({ host: '127.0.0.1', port: 1 });
  expect(overridden.logLevel).toBe('error');
  expect(applyOverrides(config, {})).toEqual(config);
});
