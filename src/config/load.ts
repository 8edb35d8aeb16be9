/**
 * loadConfig(path): read the YAML file, expand `${VAR}`, validate. Bad YAML is reported with its
 * line and column; validation problems get the line of the offending key where the file has it.
 * The yaml library's own messages quote the source line; those quotes are cut off because the
 * line may hold a password.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { ConfigError, type ConfigProblem } from '../errors.js';
import { expandEnvironment, type Environment } from './expand.js';
import { formatPath, type PathSegment } from './path.js';
import type { ExporterConfig } from './types.js';
import { checkConfig, toConfigProblem } from './validate.js';

export function loadConfig(path: string, env: Environment = process.env): ExporterConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(path, [{ path: '', message: `cannot read the config file${code ? ` (${code})` : ''}` }]);
  }
  return parseConfigText(text, { source: path, baseDir: dirname(resolve(path)), env });
}

export interface ParseOptions {
  readonly source: string;
  readonly baseDir: string;
  readonly env: Environment;
}

/** The same as loadConfig for YAML text already in memory. */
export function parseConfigText(text: string, options: ParseOptions): ExporterConfig {
  const lineCounter = new LineCounter();
  // merge: `<<: *anchor` lets servers share settings defined once (under an `x-` key).
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(options.source, doc.errors.map((error) => yamlProblem(error.message, lineCounter.linePos(error.pos[0]))));
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const message = error instanceof Error ? firstLine(error.message) : String(error);
    throw new ConfigError(options.source, [{ path: '', message: `YAML: ${message}` }]);
  }
  const expanded = expandEnvironment(raw, options.env, formatPath);
  const { config, problems } = checkConfig(expanded.value, { source: options.source, baseDir: options.baseDir, expandedPaths: expanded.expandedPaths });
  // A value whose expansion failed was reported already; what validation says about the
  // resulting empty value would only repeat it.
  const failedPaths = new Set(expanded.problems.map((p) => formatPath(p.segments)));
  const all = [...expanded.problems, ...problems.filter((p) => !failedPaths.has(formatPath(p.segments)))];
  if (all.length > 0 || !config) {
    const located = all.map((problem) => toConfigProblem(problem, lineOf(doc, lineCounter, problem.segments)));
    throw new ConfigError(options.source, located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
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
