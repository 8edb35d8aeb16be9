/**
 * loadConfig(path): read the YAML file, expand `${VAR}`, validate. Bad YAML is reported with its
 * line and column; validation problems get the line of the offending key where the file has it.
 * The yaml library's own messages quote the source line; those quotes are cut off because the
 * line may hold a password.
 */
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { configError } from '../lib/errors.js';
import { expandEnvironment, type Environment } from './expand.js';
import type { PathSegment } from './path.js';
import { formatByteSize, MAX_CONFIG_BYTES, readFileCapped } from '../lib/read-capped.js';
import { duplicateKeys, MAX_ALIAS_COUNT } from '../lib/yaml-doc.js';
import type { ExporterConfig } from './schema.js';
import { checkConfig, problemsError, type ValidateOptions } from './validate.js';

export type LoadOptions = Pick<ValidateOptions, 'reservedPaths'>;
export type ParseOptions = ValidateOptions & { readonly env: Environment };

export function loadConfig(path: string, env: Environment = process.env, options: LoadOptions = {}): ExporterConfig {
  const read = readFileCapped(path, MAX_CONFIG_BYTES);
  if (!read.ok) throw configError(path, [{ path: '', message: `cannot read the config file (${read.reason})` }]);
  return parseConfigText(read.text, { ...options, source: path, baseDir: dirname(resolve(path)), env });
}

/** The same as loadConfig for YAML text already in memory. */
export function parseConfigText(text: string, options: ParseOptions): ExporterConfig {
  // The same cap for text that did not come from a file (the limit is on the work, not the file).
  if (text.length > MAX_CONFIG_BYTES) throw configError(options.source, [{ path: '', message: `the config is larger than the ${formatByteSize(MAX_CONFIG_BYTES)} cap` }]);
  const lineCounter = new LineCounter();
  // merge: `<<: *anchor` lets servers share settings defined once (under an `x-` key).
  // uniqueKeys is checked by duplicateKeys() below: the library's own check compares every key
  // with every earlier one (10,000 keys in one mapping took 5 s).
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false, merge: true });
  const syntax = doc.errors.length > 0 ? doc.errors.map((e) => [e.message, e.pos[0]] as const) : duplicateKeys(doc).map((pos) => ['Map keys must be unique', pos] as const);
  if (syntax.length > 0) {
    throw configError(options.source, syntax.map(([message, pos]) => {
      const { line, col } = lineCounter.linePos(pos);
      return { path: '', line, message: `YAML syntax, line ${line} column ${col}: ${firstLine(message)}` };
    }));
  }
  let raw: unknown;
  try {
    // Bounds alias expansion ("billion laughs": a few lines that expand to gigabytes).
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    throw configError(options.source, [{ path: '', message: `YAML: ${error instanceof Error ? firstLine(error.message) : String(error)}` }]);
  }
  const result = checkConfig(expandEnvironment(raw, options.env), options);
  if (result.config) return result.config;
  throw problemsError(options.source, result, (segments) => lineOf(doc, lineCounter, segments));
}

/** The reason alone: the yaml library appends ` at line L, column C:` and the quoted source line, and some messages `: <source text>`. */
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
