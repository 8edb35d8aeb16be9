/**
 * From the loose YAML value to the validated ExporterConfig, by the schema (schema.ts). Every
 * problem is collected with its path; only a config without problems comes out. The demo mode
 * builds its config through this same function, so no unvalidated config ever reaches the poller.
 */
import type { z } from 'zod';
import { configError, type ConfigError, type ConfigProblem } from '../lib/errors.js';
import { SCHEMA_ONLY } from './defaults.js';
import type { ExpandedTree } from './expand.js';
import { isMapping } from './kinds.js';
import { ValidationRun } from './issues.js';
import { formatPath, type PathSegment } from './path.js';
import { configSchema, POLL_INTERVAL, type ExporterConfig, type SchemaContext } from './schema.js';

/** `source` names the config in errors (the file path, or `demo config`); `reservedPaths` defaults to none. */
export type ValidateOptions = Pick<SchemaContext, 'baseDir'> & Partial<Pick<SchemaContext, 'reservedPaths'>> & { readonly source: string };

/** A config, or the problems (`more`: how many more were only counted). */
export type CheckResult = Pick<ValidationRun, 'problems' | 'more'> & { readonly config?: ExporterConfig };

/** Validates an expanded tree and returns its problems instead of throwing (the loader adds line numbers to them). */
export function checkConfig(tree: ExpandedTree, options: ValidateOptions): CheckResult {
  const raw = tree.value;
  // Top-level keys starting with `x-` are the user's (YAML anchors to merge into servers), as in docker compose.
  return check(isMapping(raw) ? Object.fromEntries(Object.entries(raw).filter(([key]) => !key.startsWith('x-'))) : raw, tree, options);
}

function check(input: unknown, tree: ExpandedTree, options: ValidateOptions): CheckResult {
  const run = new ValidationRun(tree.expandedPaths, tree.problems);
  const top = isMapping(input) ? input : {};
  // When it is wrong (and reported), the servers are checked against the default interval.
  const pollIntervalMs = POLL_INTERVAL.safeParse(top.poll_interval).data ?? SCHEMA_ONLY.pollIntervalMs;
  const templateNames = isMapping(top.templates) ? Object.keys(top.templates) : [];
  const schema = configSchema({ baseDir: options.baseDir, reservedPaths: options.reservedPaths ?? [], pollIntervalMs, templateNames });
  // The messages are made (and the problems reported) as zod finalizes its issues.
  const result = schema.safeParse(input, { error: (issue) => (run.take(issue), '') });
  const coerced = result.success ? undefined : coerce(input, result.error.issues, tree.expandedPaths);
  if (coerced !== undefined) return check(coerced, tree, options);
  const empty = (isMapping(input) || input == null) && nothingToPoll(run, top);
  return result.success && !empty && run.problems.length === 0 ? { config: result.data, problems: [], more: 0 } : run;
}

/** A number or a boolean may come from `${VAR}`, as its text. */
const FROM_TEXT: Readonly<Record<string, (text: string) => unknown>> = {
  boolean: (t) => (t === 'true' ? true : t === 'false' ? false : undefined),
  int: (t) => (/^\s*-?\d+\s*$/.test(t) ? Number(t) : undefined),
  number: (t) => (t.trim() !== '' && Number.isFinite(Number(t)) ? Number(t) : undefined),
};

/** The input with each `${VAR}` text where a number or a boolean was expected replaced by that value; undefined when none is. */
function coerce(input: unknown, issues: readonly z.core.$ZodIssue[], expandedPaths: ReadonlySet<string>): unknown {
  if (expandedPaths.size === 0) return undefined;
  const copy = structuredClone(input);
  const changed = issues.filter((issue) => {
    const path = issue.path as PathSegment[];
    if (issue.code !== 'invalid_type' || !expandedPaths.has(formatPath(path))) return false;
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<PathSegment, unknown>)[key], copy) as Record<PathSegment, unknown>;
    const value = FROM_TEXT[issue.expected]?.(String(parent[path.at(-1)!]));
    if (value !== undefined) parent[path.at(-1)!] = value;
    return value !== undefined;
  });
  return changed.length > 0 ? copy : undefined;
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
  const result = checkConfig({ value: raw, expandedPaths: new Set(), problems: [] }, options);
  if (!result.config) throw problemsError(options.source, result);
  return result.config;
}

/** The problems of a check as a ConfigError: in file order where `lineOf` finds their lines, then the count of those not kept. */
export function problemsError(source: string, { problems, more }: CheckResult, lineOf: (segments: readonly PathSegment[]) => number | undefined = () => undefined): ConfigError {
  const located = problems.map(({ segments, message }): ConfigProblem => {
    const line = lineOf(segments);
    return { path: formatPath(segments), message, ...(line !== undefined ? { line } : {}) };
  });
  located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  if (more > 0) located.push({ path: '', message: `and ${more} more problems not shown` });
  return configError(source, located);
}
