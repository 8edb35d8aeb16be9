/**
 * loadConfig(path): read the YAML file, expand `${VAR}`, validate. Bad YAML is reported with its
 * line and column; validation problems get the line of the offending key where the file has it.
 * The yaml library's own messages quote the source line; those quotes are cut off because the
 * line may hold a password.
 */
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { configError, type ConfigProblem } from '../lib/errors.js';
import { expandEnvironment, type Environment } from './expand.js';
import { formatPath, type PathSegment } from './path.js';
import { formatByteSize, MAX_CONFIG_BYTES, readFileCapped } from '../lib/read-capped.js';
import { duplicateKeys, MAX_ALIAS_COUNT } from '../lib/yaml-doc.js';
import type { ExporterConfig } from './schema.js';
import { checkConfig, toConfigProblem } from './validate.js';

export function loadConfig(path: string, env: Environment = process.env, options: LoadOptions = {}): ExporterConfig {
  const read = readFileCapped(path, MAX_CONFIG_BYTES);
  if (!read.ok) throw configError(path, [{ path: '', message: `cannot read the config file (${read.reason})` }]);
  return parseConfigText(read.text, { ...options, source: path, baseDir: dirname(resolve(path)), env });
}

export interface LoadOptions {
  /** Paths of the HTTP server's other routes, which `metrics_path` must not take (default: none). */
  readonly reservedPaths?: readonly string[];
}

/** A config with more problems than this is shown the first ones and the count of the rest. */
export const MAX_PROBLEMS_SHOWN = 100;

export interface ParseOptions extends LoadOptions {
  readonly source: string;
  readonly baseDir: string;
  readonly env: Environment;
}

/** The same as loadConfig for YAML text already in memory. */
export function parseConfigText(text: string, options: ParseOptions): ExporterConfig {
  // The same cap for text that did not come from a file (the limit is on the work, not the file).
  if (text.length > MAX_CONFIG_BYTES) {
    throw configError(options.source, [{ path: '', message: `the config is larger than the ${formatByteSize(MAX_CONFIG_BYTES)} cap` }]);
  }
  const lineCounter = new LineCounter();
  // merge: `<<: *anchor` lets servers share settings defined once (under an `x-` key).
  // uniqueKeys is checked by duplicateKeys() below: the library's own check compares every key
  // with every earlier one (10,000 keys in one mapping took 5 s).
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false, merge: true });
  if (doc.errors.length > 0) {
    throw configError(options.source, doc.errors.map((error) => yamlProblem(error.message, lineCounter.linePos(error.pos[0]))));
  }
  const duplicates = duplicateKeys(doc);
  if (duplicates.length > 0) {
    throw configError(options.source, duplicates.map((pos) => yamlProblem('Map keys must be unique', lineCounter.linePos(pos))));
  }
  let raw: unknown;
  try {
    // Bounds alias expansion ("billion laughs": a few lines that expand to gigabytes).
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = error instanceof Error ? firstLine(error.message) : String(error);
    throw configError(options.source, [{ path: '', message: `YAML: ${message}` }]);
  }
  const expanded = expandEnvironment(raw, options.env, formatPath);
  const { config, problems, more } = checkConfig(expanded.value, { ...options, expandedPaths: expanded.expandedPaths });
  // A value whose expansion failed was reported already; what validation says about the
  // resulting empty value would only repeat it.
  const failedPaths = new Set(expanded.problems.map((p) => formatPath(p.segments)));
  const all = [...expanded.problems, ...problems.filter((p) => !failedPaths.has(formatPath(p.segments)))];
  if (all.length > 0 || !config) {
    // Finding a line costs a walk of the mapping: only the problems shown are located.
    const located = all.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => toConfigProblem(problem, lineOf(doc, lineCounter, problem.segments)));
    located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    const notShown = Math.max(0, all.length - MAX_PROBLEMS_SHOWN) + more;
    if (notShown > 0) located.push({ path: '', message: `and ${notShown} more problems not shown` });
    throw configError(options.source, located);
  }
  return config;
}

function yamlProblem(message: string, position: { line: number; col: number }): ConfigProblem {
  return { path: '', line: position.line, message: `YAML syntax, line ${position.line} column ${position.col}: ${firstLine(message)}` };
}

/**
 * The yaml library appends ` at line L, column C:` and the quoted source line, and some messages
 * end in `: <source text>`: keep only the reason before any of that.
 */
function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '').split(': ')[0]!.trim();
}

/** Line of the value at a path, or of the nearest enclosing node that exists. */
function lineOf(doc: Document, lineCounter: LineCounter, segments: readonly PathSegment[]): number | undefined {
  for (let n = segments.length; n > 0; n--) {
    const node = doc.getIn(segments.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return undefined;
}
