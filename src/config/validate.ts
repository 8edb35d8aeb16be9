/**
 * From the loose YAML value to the validated ExporterConfig, by the schema (schema.ts). Every
 * problem is collected with its path; only a config without problems comes out. The demo mode
 * builds its config through this same function, so no unvalidated config ever reaches the poller.
 */
import { configError, type ConfigProblem } from '../lib/errors.js';
import { isMapping } from './kinds.js';
import { ValidationRun, type PathProblem } from './issues.js';
import { formatPath, type PathSegment } from './path.js';
import { configSchema, POLL_INTERVAL, type ExporterConfig } from './schema.js';

export interface ValidateOptions {
  /** Names the config in errors: the file path, or `demo config`. */
  readonly source: string;
  /** Relative `*_file` and `state_file` paths are resolved against it. */
  readonly baseDir: string;
  /** Paths whose values came from `${VAR}` (never echoed). */
  readonly expandedPaths?: ReadonlySet<string>;
  /** Paths of the HTTP server's other routes, which `metrics_path` must not take (default: none). */
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
  const expandedPaths = options.expandedPaths ?? new Set<string>();
  // Top-level keys starting with `x-` are the user's (YAML anchors to merge into servers), as in docker compose.
  let input = isMapping(raw) ? Object.fromEntries(Object.entries(raw).filter(([key]) => !key.startsWith('x-'))) : raw;
  for (;;) {
    const run = new ValidationRun(expandedPaths);
    const top = isMapping(input) ? input : {};
    // When it is wrong (and reported), the servers are checked against any valid interval.
    const interval = POLL_INTERVAL.safeParse(top.poll_interval);
    const templates = isMapping(top.templates) ? Object.keys(top.templates) : [];
    const schema = configSchema({ baseDir: options.baseDir, reservedPaths: options.reservedPaths ?? [], pollIntervalMs: interval.data ?? 15_000, templateNames: templates });
    const result = schema.safeParse(input, { error: (issue) => (run.take(issue), '') });
    if (result.success) {
      if (nothingToPoll(run, top)) return { config: undefined, problems: run.problems, more: run.more };
      return { config: result.data, problems: [], more: 0 };
    }
    // The messages are made (and the problems reported) as zod finalizes its issues.
    const coercible = result.error.issues.filter((issue) => issue.code === 'invalid_type' && expandedPaths.has(formatPath(issue.path as PathSegment[])));
    const next = coercible.length > 0 ? coerce(input, coercible.map((issue) => ({ path: issue.path as PathSegment[], expected: (issue as { expected: string }).expected }))) : undefined;
    if (next === undefined) {
      if (isMapping(input) || input == null) nothingToPoll(run, top);
      return { config: undefined, problems: run.problems, more: run.more };
    }
    input = next;
  }
}

/** A number or a boolean may come from `${VAR}`, as its text. */
const FROM_TEXT: Readonly<Record<string, (text: string) => unknown>> = {
  boolean: (t) => (t === 'true' ? true : t === 'false' ? false : undefined),
  int: (t) => (/^\s*-?\d+\s*$/.test(t) ? Number(t) : undefined),
  number: (t) => (t.trim() !== '' && Number.isFinite(Number(t)) ? Number(t) : undefined),
};

/** The input with the text at each path of a type problem replaced by the value it is the text of; undefined when none is. */
function coerce(input: unknown, issues: readonly { path: PathSegment[]; expected: string }[]): unknown {
  const copy = structuredClone(input);
  let changed = false;
  for (const { path, expected } of issues) {
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], copy) as Record<string | number, unknown>;
    const text = parent[path.at(-1)!];
    const value = typeof text === 'string' ? FROM_TEXT[expected]?.(text) : undefined;
    if (value === undefined) continue;
    parent[path.at(-1)!] = value;
    changed = true;
  }
  return changed ? copy : undefined;
}

/** A config needs a server, a catena entry or a discovery source. */
function nothingToPoll(run: ValidationRun, top: Record<string, unknown>): boolean {
  const count = (value: unknown): number => (Array.isArray(value) ? value.length : 0);
  const discovery = isMapping(top.discovery) ? count(top.discovery.cluster_peers) + count(top.discovery.file_sd) : 0;
  if (discovery > 0 || count(top.servers) + count(top.catena) > 0) return false;
  if (top.servers == null && top.catena == null) run.report([], 'nothing to poll: add a `servers:` list (Flussonic), a `catena:` list (operations log) or `discovery:`');
  else run.report([top.servers != null ? 'servers' : 'catena'], 'nothing to poll: the list is empty (add a Flussonic server or a catena entry)');
  return true;
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
