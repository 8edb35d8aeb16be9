/**
 * Command-line arguments to one command. Parsing only: nothing here starts, reads or prints
 * anything, so every combination is testable in-process.
 */
import { parseArgs } from 'node:util';
import { LOG_LEVELS, metricsPathProblem, parseExternalAddress, parseListenAddress, type ExporterConfig, type ListenAddress } from './config/index.js';
import { formatDuration, parseDuration } from './lib/units.js';
import { DEFAULT_LIMITS, type HttpLimits } from './serve/limits.js';
import { WebConfigError } from './serve/web-config.js';
import { FIXED_ROUTE_PATHS } from './serve/routes.js';
import { isConfigError } from './lib/errors.js';
import { shardFromFlags, type ShardSpec } from './fleet/shard.js';
import { LOG_FORMATS, type LogFormat } from './logger.js';

export const CONFIG_ENV = 'FLUSSONIC_EXPORTER_CONFIG';
/** The environment variable --web.external-address falls back to (the Kubernetes manifests set it per pod). */
export const EXTERNAL_ADDRESS_ENV = 'FLUSSONIC_EXPORTER_EXTERNAL_ADDRESS';

export const USAGE = `Usage:
  flussonic-exporter --config.file FILE [--web.listen-address HOST:PORT ...] [--web.config.file FILE] [options]
  flussonic-exporter --config.file FILE --config.check [--web.config.file FILE] [options]
  flussonic-exporter --web.config.check FILE
  flussonic-exporter --demo [--demo-full] [--demo-shape flat|nested] [--web.listen-address HOST:PORT ...] [options]
  flussonic-exporter simulate [--port 8080 --streams 200 --sessions 5000 ...]   (see simulate --help)

Prometheus exporter for Flussonic Media Server (API v3) and the Catena operations log.

Options:
  -c, --config.file FILE           YAML config (default: $${CONFIG_ENV}); see config.example.yaml.
                                   Alias: --config
      --config.check               validate the config, --web.config.file and the other flags, print
                                   every problem, exit 0 (valid) or 2. Alias: --check-config
      --demo                       poll an embedded simulator on a loopback port (simulated data!);
                                   listens on 127.0.0.1:9228 unless --web.listen-address says otherwise
      --demo-full                  the full tour: the demo with every collector and family switch on
                                   (--demo alone runs the default settings, what a new config gets)
      --demo-shape SHAPE           stream stats of the demo: nested (Flussonic 2025, default) or flat (23.x/24.x)
      --web.listen-address H:P     where the endpoints are served, repeatable for several addresses;
                                   overrides listen_address (default :9228). Alias: --listen-address
      --web.telemetry-path PATH    path of the metrics, overrides metrics_path (default /metrics)
      --web.external-address H:P   where Prometheus reaches this replica: the address of every
                                   target /sd lists (default: $${EXTERNAL_ADDRESS_ENV}, else the
                                   local address of the connection the /sd request came in on)
      --web.config.file FILE       TLS and basic auth, in the Prometheus exporter-toolkit format;
                                   re-read when it changes and on SIGHUP
      --web.config.check FILE      validate a web config file alone, print every problem, exit 0 or 2
      --web.max-requests N         concurrent scrapes of the metrics path; beyond it 503 (default ${DEFAULT_LIMITS.maxRequests})
      --web.max-connections N      open connections over all addresses (default ${DEFAULT_LIMITS.maxConnections})
      --web.read-header-timeout D  time to receive request headers (default ${formatDuration(DEFAULT_LIMITS.readHeaderTimeoutMs)})
      --web.idle-timeout D         how long an idle keep-alive connection is kept (default ${formatDuration(DEFAULT_LIMITS.idleTimeoutMs)})
      --web.request-timeout D      time to receive a whole request, and the longest stall while
                                   the response is written (default ${formatDuration(DEFAULT_LIMITS.requestTimeoutMs)})
      --web.health-without-auth    serve /-/healthy and /-/ready without basic auth (kubelet probes;
                                   they answer only OK or not ready); every other path keeps it
      --web.enable-lifecycle       serve POST /-/reload (reloads like SIGHUP); without it 403
      --log.level LEVEL            debug | info | warn | error, overrides log_level. Alias: --log-level
      --log.format FORMAT          json (default: one JSON object a line) or logfmt (key=value lines)
      --shard N                    poll only the servers whose name hashes to shard N (0-based) ...
      --total-shards M             ... of M replicas (kube-state-metrics style sharding)
      --shard-from-hostname        take N from the StatefulSet pod name (HOSTNAME=name-N)
  -v, --version                    print the version
  -h, --help                       print this help

Signals: SIGHUP (or POST /-/reload with --web.enable-lifecycle) reloads the config and the web
config (a bad one is logged and the old one kept);
SIGTERM/SIGINT stop cleanly. Exit codes: 0 clean stop, 2 bad config or arguments, 1 runtime failure.`;

/** Bad arguments: printed with a hint to --help, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type LogLevel = ExporterConfig['logLevel'];

/** Settings of the config file that flags override (they win over the file, also on reload). */
export interface Overrides {
  /** Every --web.listen-address, in order; the first also stands for listen_address. */
  readonly listenAddresses?: readonly ListenAddress[];
  readonly metricsPath?: string;
  readonly logLevel?: LogLevel;
}

/** The stream stats shape the demo's simulator serves: flat (23.x/24.x) or nested (2025). */
export const DEMO_SHAPES = ['nested', 'flat'] as const;
export type DemoShape = (typeof DEMO_SHAPES)[number];

/** HTTP settings that only flags set. */
export interface WebOptions {
  readonly configFile?: string;
  /** --web.health-without-auth */
  readonly healthWithoutAuth?: boolean;
  /** HOST:PORT that /sd gives Prometheus as this replica's address (never the request's Host header). */
  readonly externalAddress?: string;
  readonly limits: HttpLimits;
  /** --web.enable-lifecycle: POST /-/reload reloads; absent, it answers 403. */
  readonly enableLifecycle?: true;
}

/** `full`: every collector and family switch on (--demo-full); absent: the default settings. */
export type RunSource = { readonly kind: 'file'; readonly path: string } | { readonly kind: 'demo'; readonly shape: DemoShape; readonly full?: true };

export type CliCommand =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'simulate'; readonly argv: readonly string[] }
  | { readonly kind: 'check'; readonly configPath: string; readonly webConfigFile?: string }
  | { readonly kind: 'check-web'; readonly file: string }
  | {
      readonly kind: 'run';
      readonly source: RunSource;
      readonly overrides: Overrides;
      readonly web: WebOptions;
      readonly shard?: ShardSpec;
      /** --log.format, when given (default json). */
      readonly logFormat?: LogFormat;
    };

/** Where the demo listens unless told otherwise: simulated data is not for the network. */
export const DEMO_LISTEN_ADDRESS: ListenAddress = Object.freeze({ host: '127.0.0.1', port: 9228 });

/**
 * Every flag. The dotted names are the Prometheus exporters' (node_exporter, blackbox_exporter);
 * the older names stay as aliases (ALIASES).
 */
const OPTIONS = {
  'config.file': { type: 'string', short: 'c' },
  config: { type: 'string' },
  'config.check': { type: 'boolean' },
  'check-config': { type: 'boolean' },
  demo: { type: 'boolean' },
  'demo-full': { type: 'boolean' },
  'demo-shape': { type: 'string' },
  'web.listen-address': { type: 'string', multiple: true },
  'listen-address': { type: 'string', multiple: true },
  'web.telemetry-path': { type: 'string' },
  'web.config.file': { type: 'string' },
  'web.external-address': { type: 'string' },
  'web.config.check': { type: 'string' },
  'web.max-requests': { type: 'string' },
  'web.max-connections': { type: 'string' },
  'web.read-header-timeout': { type: 'string' },
  'web.idle-timeout': { type: 'string' },
  'web.request-timeout': { type: 'string' },
  'web.health-without-auth': { type: 'boolean' },
  'web.enable-lifecycle': { type: 'boolean' },
  'log.level': { type: 'string' },
  'log-level': { type: 'string' },
  'log.format': { type: 'string' },
  shard: { type: 'string' },
  'total-shards': { type: 'string' },
  'shard-from-hostname': { type: 'boolean' },
  version: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Old flag names, each beside the one it stands for (both may not be given with different values). */
const ALIASES = [
  ['config.file', 'config'],
  ['config.check', 'check-config'],
  ['log.level', 'log-level'],
] as const;

export function parseCli(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): CliCommand {
  if (argv[0] === 'simulate') return { kind: 'simulate', argv: argv.slice(1) };
  let parsed;
  try {
    ({ values: parsed } = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: OPTIONS }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const values: Values = { ...parsed };
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const webCheck = values['web.config.check'];
  if (typeof webCheck === 'string') {
    if (webCheck.trim() === '') throw new UsageError('--web.config.check: empty path');
    return { kind: 'check-web', file: webCheck as string };
  }
  for (const [name, alias] of ALIASES) {
    const [given, old] = [values[name], values[alias]];
    if (given !== undefined && old !== undefined && given !== old) throw new UsageError(`--${name} and its alias --${alias} are both given, with different values`);
    if (given === undefined && old !== undefined) values[name] = old;
  }
  // --demo-full is the demo too, with every switch on.
  if (values['demo-full']) values.demo = true;

  const configFlag = values['config.file'] as string | undefined;
  if (values.demo && configFlag !== undefined) throw new UsageError('--demo and --config.file exclude each other: the demo polls only its simulator');
  // --demo wins over the variable: an explicit flag is what the user asked for now.
  const configPath = configFlag ?? (values.demo ? undefined : nonEmpty(env[CONFIG_ENV]));
  const webConfigFile = values['web.config.file'] as string | undefined;
  if (webConfigFile !== undefined && webConfigFile.trim() === '') throw new UsageError('--web.config.file: empty path');
  const check = values['config.check'] === true;
  if (check && values.demo) throw new UsageError('--config.check checks a config file; --demo has none');
  // Every flag is checked before --config.check answers: what it accepts starts.
  const overrides = parseOverrides(values);
  const logFormat = parseLogFormat(values['log.format'] as string | undefined);
  const externalAddress = parseExternal(values['web.external-address'] as string | undefined, env);
  const web: WebOptions = {
    ...(webConfigFile !== undefined ? { configFile: webConfigFile } : {}),
    ...(values['web.health-without-auth'] ? { healthWithoutAuth: true } : {}),
    ...(externalAddress ? { externalAddress } : {}),
    limits: parseLimits(values),
    ...(values['web.enable-lifecycle'] === true ? { enableLifecycle: true as const } : {}),
  };
  const shard = shardFromFlags({ shard: values.shard as string | undefined, totalShards: values['total-shards'] as string | undefined, fromHostname: values['shard-from-hostname'] as boolean | undefined }, env.HOSTNAME);
  if (typeof shard === 'string') throw new UsageError(shard);
  if (values['demo-shape'] !== undefined && !values.demo) throw new UsageError('--demo-shape chooses the stats shape of --demo; add --demo');
  if (check) {
    if (configPath === undefined) throw new UsageError(`--config.check needs --config FILE (or ${CONFIG_ENV})`);
    return { kind: 'check', configPath, ...(webConfigFile !== undefined ? { webConfigFile } : {}) };
  }
  const sharding = shard.totalShards > 1 ? { shard } : {};
  const logging = logFormat !== undefined ? { logFormat } : {};
  if (values.demo) {
    const full = values['demo-full'] ? { full: true as const } : {};
    return { kind: 'run', source: { kind: 'demo', shape: demoShape(values['demo-shape'] as string | undefined), ...full }, overrides: { listenAddresses: [DEMO_LISTEN_ADDRESS], ...overrides }, web, ...sharding, ...logging };
  }
  if (configPath === undefined) {
    throw new UsageError(`no config given: start with --config FILE (or set ${CONFIG_ENV}=FILE); to try it out without a Flussonic server, run with --demo`);
  }
  return { kind: 'run', source: { kind: 'file', path: configPath }, overrides, web, ...sharding, ...logging };
}

function parseLogFormat(value: string | undefined): LogFormat | undefined {
  if (value === undefined) return undefined;
  if (!(LOG_FORMATS as readonly string[]).includes(value)) throw new UsageError(`--log.format: expected one of ${LOG_FORMATS.join(', ')}, got ${JSON.stringify(value)}`);
  return value as LogFormat;
}

function demoShape(value: string | undefined): DemoShape {
  if (value === undefined) return 'nested';
  if (!(DEMO_SHAPES as readonly string[]).includes(value)) throw new UsageError(`--demo-shape: expected one of ${DEMO_SHAPES.join(', ')}, got ${JSON.stringify(value)}`);
  return value as DemoShape;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** --web.external-address, else its environment variable (an empty one counts as unset). */
function parseExternal(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const [text, from] = flag !== undefined ? [flag, '--web.external-address'] : [nonEmpty(env[EXTERNAL_ADDRESS_ENV]), `$${EXTERNAL_ADDRESS_ENV}`];
  if (text === undefined) return undefined;
  const parsed = parseExternalAddress(text);
  if (typeof parsed === 'string') throw new UsageError(`${from}: ${parsed}`);
  return parsed.address;
}

type Values = Partial<Record<keyof typeof OPTIONS, string | boolean | string[]>>;

function parseOverrides(values: Values): Overrides {
  const out: { listenAddresses?: ListenAddress[]; metricsPath?: string; logLevel?: LogLevel } = {};
  const addresses = [...((values['web.listen-address'] as string[] | undefined) ?? []), ...((values['listen-address'] as string[] | undefined) ?? [])];
  if (addresses.length > 0) {
    out.listenAddresses = addresses.map((text) => {
      const parsed = parseListenAddress(text);
      if (typeof parsed === 'string') throw new UsageError(`--web.listen-address: ${parsed}`);
      return parsed;
    });
    const seen = new Set<string>();
    for (const a of out.listenAddresses) {
      const key = `${a.host}:${a.port}`;
      if (a.port !== 0 && seen.has(key)) throw new UsageError(`--web.listen-address: ${key} is given twice`);
      seen.add(key);
    }
  }
  const path = values['web.telemetry-path'] as string | undefined;
  if (path !== undefined) {
    const problem = metricsPathProblem(path, FIXED_ROUTE_PATHS);
    if (problem) throw new UsageError(`--web.telemetry-path: ${problem}`);
    out.metricsPath = path;
  }
  const logLevel = values['log.level'] as string | undefined;
  if (logLevel !== undefined) {
    const flag = values['log-level'] !== undefined ? '--log-level' : '--log.level';
    if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new UsageError(`${flag}: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
    out.logLevel = logLevel as LogLevel;
  }
  return out;
}

function parseLimits(values: Values): HttpLimits {
  const count = (flag: 'web.max-requests' | 'web.max-connections', fallback: number): number => {
    const text = values[flag] as string | undefined;
    if (text === undefined) return fallback;
    if (!/^\d{1,9}$/.test(text.trim()) || Number(text) < 1) throw new UsageError(`--${flag}: expected a whole number of at least 1, got ${JSON.stringify(text)}`);
    return Number(text);
  };
  const duration = (flag: 'web.read-header-timeout' | 'web.idle-timeout' | 'web.request-timeout', fallback: number): number => {
    const text = values[flag] as string | undefined;
    if (text === undefined) return fallback;
    const ms = parseDuration(text);
    if (ms === undefined || ms < 1) throw new UsageError(`--${flag}: expected a duration like 10s or 500ms, got ${JSON.stringify(text)}`);
    return ms;
  };
  return {
    maxRequests: count('web.max-requests', DEFAULT_LIMITS.maxRequests),
    maxConnections: count('web.max-connections', DEFAULT_LIMITS.maxConnections),
    readHeaderTimeoutMs: duration('web.read-header-timeout', DEFAULT_LIMITS.readHeaderTimeoutMs),
    idleTimeoutMs: duration('web.idle-timeout', DEFAULT_LIMITS.idleTimeoutMs),
    requestTimeoutMs: duration('web.request-timeout', DEFAULT_LIMITS.requestTimeoutMs),
  };
}

/** The config with the command-line overrides applied (they win over the file, also on reload). */
export function applyOverrides(config: ExporterConfig, overrides: Overrides): ExporterConfig {
  const { listenAddresses, ...rest } = overrides;
  return { ...config, ...rest, ...(listenAddresses?.[0] ? { listenAddress: listenAddresses[0] } : {}) };
}

/** Every address to listen on: the flags' when given, else the config's listen_address. */
export function listenAddresses(config: ExporterConfig, overrides: Overrides): readonly ListenAddress[] {
  return overrides.listenAddresses ?? [config.listenAddress];
}

/** A failure of the running exporter (the port is taken): exit code 1. */
export class RuntimeFailure extends Error {
  override name = 'RuntimeFailure';
}

/**
 * Exit code and stderr text for an error that ends the process: 2 for bad arguments or config,
 * 1 for anything else. The first line is always the whole reason; a bad config lists each problem
 * on a line of its own after it.
 */
export function failureReport(error: unknown): { readonly exitCode: number; readonly text: string } {
  if (error instanceof UsageError) return { exitCode: 2, text: `flussonic-exporter: ${error.message} (see --help)\n` };
  if (error instanceof WebConfigError) {
    const lines = error.problems.map((p) => `  ${p}`);
    return { exitCode: 2, text: `flussonic-exporter: invalid web config ${error.file}: ${error.problems.length === 1 ? '1 problem' : `${error.problems.length} problems`}\n${lines.join('\n')}\n` };
  }
  if (isConfigError(error)) {
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
    EADDRINUSE: 'address already in use (another process has the port; choose another with --web.listen-address)',
    EACCES: 'permission denied (ports below 1024 need privileges)',
    EADDRNOTAVAIL: 'address not available on this host',
  };
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  const reason = (code && reasons[code]) ?? (error instanceof Error ? error.message : String(error));
  return new RuntimeFailure(`cannot listen on ${host}:${address.port}: ${reason}`, { cause: error });
}
