/**
 * Command-line arguments to one command. Parsing only: nothing here starts, reads or prints
 * anything, so every combination is testable in-process.
 */
import { parseArgs } from 'node:util';
import { LOG_LEVELS, parseListenAddress, type ExporterConfig, type ListenAddress } from './config/index.js';
import { ConfigError, ExporterError } from './errors.js';

export const CONFIG_ENV = 'FLUSSONIC_EXPORTER_CONFIG';

export const USAGE = `Usage:
  flussonic-exporter --config FILE [--listen-address HOST:PORT] [--log-level LEVEL]
  flussonic-exporter --config FILE --check-config
  flussonic-exporter --demo [--demo-shape flat|nested] [--listen-address HOST:PORT] [--log-level LEVEL]
  flussonic-exporter simulate [--port 8080 --streams 200 --sessions 5000 ...]   (see simulate --help)

Prometheus exporter for Flussonic Media Server (API v3) and the Catena operations log.

Options:
  -c, --config FILE           YAML config (default: $${CONFIG_ENV}); see config.example.yaml
      --check-config          validate the config, print every problem, exit 0 (valid) or 2
      --demo                  poll an embedded simulator on a loopback port (simulated data!)
      --demo-shape SHAPE      stream stats of the demo: nested (Flussonic 2025, default) or flat (23.x/24.x)
      --listen-address H:P    where /metrics is served, overrides listen_address (default :9228)
      --log-level LEVEL       debug | info | warn | error, overrides log_level
  -v, --version               print the version
  -h, --help                  print this help

Signals: SIGHUP reloads the config (a bad one is logged and the old one kept);
SIGTERM/SIGINT stop cleanly. Exit codes: 0 clean stop, 2 bad config or arguments, 1 runtime failure.`;

/** Bad arguments: printed with a hint to --help, exit code 2. */
export class UsageError extends ExporterError {
  override name = 'UsageError';
}

export type LogLevel = ExporterConfig['logLevel'];

export interface Overrides {
  readonly listenAddress?: ListenAddress;
  readonly logLevel?: LogLevel;
}

/** The stream stats shape the demo's simulator serves: flat (23.x/24.x) or nested (2025). */
export const DEMO_SHAPES = ['nested', 'flat'] as const;
export type DemoShape = (typeof DEMO_SHAPES)[number];

export type CliCommand =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'simulate'; readonly argv: readonly string[] }
  | { readonly kind: 'check'; readonly configPath: string }
  | { readonly kind: 'run'; readonly source: { readonly kind: 'file'; readonly path: string } | { readonly kind: 'demo'; readonly shape: DemoShape }; readonly overrides: Overrides };

export function parseCli(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): CliCommand {
  if (argv[0] === 'simulate') return { kind: 'simulate', argv: argv.slice(1) };
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string', short: 'c' },
        'check-config': { type: 'boolean' },
        demo: { type: 'boolean' },
        'demo-shape': { type: 'string' },
        'listen-address': { type: 'string' },
        'log-level': { type: 'string' },
        version: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };

  if (values.demo && values.config !== undefined) throw new UsageError('--demo and --config exclude each other: the demo polls only its simulator');
  // --demo wins over the variable: an explicit flag is what the user asked for now.
  const configPath = values.config ?? (values.demo ? undefined : nonEmpty(env[CONFIG_ENV]));
  if (values['check-config']) {
    if (values.demo) throw new UsageError('--check-config checks a config file; --demo has none');
    if (configPath === undefined) throw new UsageError(`--check-config needs --config FILE (or ${CONFIG_ENV})`);
    return { kind: 'check', configPath };
  }
  const overrides = parseOverrides(values['listen-address'], values['log-level']);
  if (values.demo) return { kind: 'run', source: { kind: 'demo', shape: demoShape(values['demo-shape']) }, overrides };
  if (values['demo-shape'] !== undefined) throw new UsageError('--demo-shape chooses the stats shape of --demo; add --demo');
  if (configPath === undefined) {
    throw new UsageError(`no config given: start with --config FILE (or set ${CONFIG_ENV}=FILE); to try it out without a Flussonic server, run with --demo`);
  }
  return { kind: 'run', source: { kind: 'file', path: configPath }, overrides };
}

function demoShape(value: string | undefined): DemoShape {
  if (value === undefined) return 'nested';
  if (!(DEMO_SHAPES as readonly string[]).includes(value)) throw new UsageError(`--demo-shape: expected one of ${DEMO_SHAPES.join(', ')}, got ${JSON.stringify(value)}`);
  return value as DemoShape;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function parseOverrides(listenAddress: string | undefined, logLevel: string | undefined): Overrides {
  const out: { listenAddress?: ListenAddress; logLevel?: LogLevel } = {};
  if (listenAddress !== undefined) {
    const parsed = parseListenAddress(listenAddress);
    if (typeof parsed === 'string') throw new UsageError(`--listen-address: ${parsed}`);
    out.listenAddress = parsed;
  }
  if (logLevel !== undefined) {
    if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new UsageError(`--log-level: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
    out.logLevel = logLevel as LogLevel;
  }
  return out;
}

/** The config with the command-line overrides applied (they win over the file, also on reload). */
export function applyOverrides(config: ExporterConfig, overrides: Overrides): ExporterConfig {
  return { ...config, ...overrides };
}

/** A failure of the running exporter (the port is taken): exit code 1. */
export class RuntimeFailure extends ExporterError {
  override name = 'RuntimeFailure';
}

/**
 * Exit code and stderr text for an error that ends the process: 2 for bad arguments or config,
 * 1 for anything else. The first line is always the whole reason; a bad config lists each problem
 * on a line of its own after it.
 */
export function failureReport(error: unknown): { readonly exitCode: number; readonly text: string } {
  if (error instanceof UsageError) return { exitCode: 2, text: `flussonic-exporter: ${error.message} (see --help)\n` };
  if (error instanceof ConfigError) {
    const count = error.problems.length === 1 ? '1 problem' : `${error.problems.length} problems`;
    const lines = error.problems.map((p) => `  ${p.path ? `${p.path}: ` : ''}${p.message}${p.line !== undefined && p.path ? ` (line ${p.line})` : ''}`);
    return { exitCode: 2, text: `flussonic-exporter: invalid config ${error.source}: ${count}\n${lines.join('\n')}\n` };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: 1, text: `flussonic-exporter: ${message.split('\n')[0]}\n` };
}

/** The one-line reason of a failed listen: `cannot listen on 0.0.0.0:9228: address already in use`. */
export function listenFailure(address: ListenAddress, error: unknown): RuntimeFailure {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reasons: Readonly<Record<string, string>> = {
    EADDRINUSE: 'address already in use (another process has the port; choose another with --listen-address)',
    EACCES: 'permission denied (ports below 1024 need privileges)',
    EADDRNOTAVAIL: 'address not available on this host',
  };
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  const reason = (code && reasons[code]) ?? (error instanceof Error ? error.message : String(error));
  return new RuntimeFailure(`cannot listen on ${host}:${address.port}: ${reason}`, { cause: error });
}
