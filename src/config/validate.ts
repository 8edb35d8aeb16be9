/**
 * From the loose YAML value to the validated ExporterConfig. Every problem is collected with its
 * path; only a config without problems comes out. The demo mode builds its config through this
 * same function, so no unvalidated config ever reaches the poller.
 */
import { configError, type ConfigProblem } from '../lib/errors.js';
import { readCatena } from './catena.js';
import { readDiscovery, readTemplates } from './discovery.js';
import { DEFAULTS, KNOWN_KEYS, LOG_LEVELS } from './defaults.js';
import { Section, ValidationRun, type PathProblem } from './fields.js';
import { formatPath } from './path.js';
import { readServer } from './server.js';
import type { CatenaConfig, ExporterConfig, ServerConfig } from './types.js';
import { parseListenAddress, type FileContext } from './values.js';

export interface ValidateOptions {
  /** Names the config in errors: the file path, or `demo config`. */
  readonly source: string;
  /** Relative `*_file` and `state_file` paths are resolved against it. */
  readonly baseDir: string;
  /** Paths whose values came from `${VAR}` (never echoed). */
  readonly expandedPaths?: ReadonlySet<string>;
  /** Paths `metrics_path` may not take: the HTTP face's fixed routes, given by the caller. */
  readonly reservedPaths?: readonly string[];
}

export interface CheckResult {
  readonly config: ExporterConfig | undefined;
  readonly problems: readonly PathProblem[];
  /** Problems only counted, beyond the ones in `problems`. */
  readonly more: number;
}

/** Validates and returns problems instead of throwing (the loader adds line numbers to them). */
export function checkConfig(raw: unknown, options: ValidateOptions): CheckResult {
  const run = new ValidationRun(options.expandedPaths ?? new Set());
  const top = Section.of(run, [], raw);
  if (!top) return { config: undefined, problems: run.problems, more: run.more };
  // Top-level keys starting with `x-` are the user's (YAML anchors to merge into servers), as in docker compose.
  top.rejectUnknownKeys(KNOWN_KEYS.top, (key) => key.startsWith('x-'));
  const files: FileContext = { baseDir: options.baseDir };

  const pollIntervalMs = top.duration('poll_interval', { minMs: DEFAULTS.minPollIntervalMs }) ?? DEFAULTS.pollIntervalMs;
  const servers = readEntries(top, 'servers', (section) => readServer(section, pollIntervalMs, files));
  const catena = readEntries(top, 'catena', (section) => readCatena(section, files));
  const templates = readTemplates(top, pollIntervalMs, files);
  const discovery = readDiscovery(top, templates, files);
  if (discovery.length > 0) {
    // Discovery may find every server; nothing static is needed.
  } else if (servers.length === 0 && catena.length === 0 && !top.has('servers') && !top.has('catena')) {
    run.report([], 'nothing to poll: add a `servers:` list (Flussonic), a `catena:` list (operations log) or `discovery:`');
  } else if (servers.length === 0 && catena.length === 0) {
    top.report(top.has('servers') ? 'servers' : 'catena', 'nothing to poll: the list is empty (add a Flussonic server or a catena entry)');
  }
  checkUniqueNames(run, servers, catena);

  const config: ExporterConfig = {
    listenAddress: readListenAddress(top),
    metricsPath: readMetricsPath(top, options.reservedPaths ?? []),
    logLevel: top.oneOf('log_level', LOG_LEVELS, DEFAULTS.logLevel),
    pollIntervalMs,
    workers: top.int('workers', DEFAULTS.workers, { min: 1, max: DEFAULTS.maxWorkers }),
    servers,
    catena,
    ...(templates.size > 0 ? { templates } : {}),
    ...(discovery.length > 0 ? { discovery } : {}),
  };
  return { config: run.problems.length === 0 ? config : undefined, problems: run.problems, more: run.more };
}

/** Validates a loose config value; throws a ConfigError listing every problem. */
export function validateConfig(raw: unknown, options: ValidateOptions): ExporterConfig {
  const { config, problems } = checkConfig(raw, options);
  if (!config) throw configError(options.source, problems.map((problem) => toConfigProblem(problem)));
  return config;
}

export function toConfigProblem(problem: PathProblem, line?: number): ConfigProblem {
  return { path: formatPath(problem.segments), message: problem.message, ...(line !== undefined ? { line } : {}) };
}

function readEntries<T>(top: Section, key: string, read: (section: Section) => T): T[] {
  const out: T[] = [];
  top.list(key).forEach((item, index) => {
    const section = Section.of(top.run, [key, index], item);
    if (section) out.push(read(section));
  });
  return out;
}

/**
 * Names are unique within `servers` and within `catena`: each is the value of its label (`server`,
 * `catena`), and the poller and its logs refer to a target by kind and name. A server and a
 * catena entry may share a name (the demo has both called `demo`).
 */
function checkUniqueNames(run: ValidationRun, servers: readonly ServerConfig[], catena: readonly CatenaConfig[]): void {
  const check = (list: string, names: readonly string[]): void => {
    const firstUse = new Map<string, number>();
    names.forEach((name, index) => {
      if (name === '') return;
      const earlier = firstUse.get(name);
      if (earlier !== undefined) run.report([list, index, 'name'], `duplicate name ${JSON.stringify(name)} (already used by ${list}[${earlier}]); names must be unique`);
      else firstUse.set(name, index);
    });
  };
  check('servers', servers.map((s) => s.name));
  check('catena', catena.map((c) => c.name));
}

function readListenAddress(top: Section): ExporterConfig['listenAddress'] {
  const text = top.string('listen_address') ?? DEFAULTS.listenAddress;
  const parsed = parseListenAddress(text);
  if (typeof parsed === 'string') {
    top.report('listen_address', parsed);
    return { host: DEFAULTS.listenHostAny, port: DEFAULTS.listenPort };
  }
  return parsed;
}

/**
 * Why a metrics path is not one (also for --web.telemetry-path), or undefined; `reserved`: the
 * paths of other routes (a trailing slash is ignored when routing, so `/-/ready/` is taken too).
 */
export function metricsPathProblem(path: string, reserved: readonly string[], shown: string = JSON.stringify(path)): string | undefined {
  if (!/^\/[A-Za-z0-9._~\-/]+$/.test(path) || reserved.includes(path) || reserved.includes(path.replace(/(.)\/$/, '$1'))) return `must be a path like /metrics${reserved.length > 0 ? `, other than ${reserved.join(' ')}` : ''}; got ${shown}`;
  return undefined;
}

function readMetricsPath(top: Section, reserved: readonly string[]): string {
  const path = top.string('metrics_path') ?? DEFAULTS.metricsPath;
  const problem = metricsPathProblem(path, reserved, top.run.show(top.at('metrics_path'), path));
  if (problem) {
    top.report('metrics_path', problem);
    return DEFAULTS.metricsPath;
  }
  return path;
}
