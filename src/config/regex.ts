/**
 * Every regex a config takes is compiled here, by RE2's rules (the re2js engine): matching takes
 * time linear in the length of the name, whatever the pattern. JavaScript's own RegExp
 * backtracks: `(a+)+b` against 28 `a` blocked the process for 9.4 s per poll (issue 10).
 * RE2 has no backreferences (`\1`) and no lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`); a pattern
 * that uses them is a config error naming its path.
 *
 * Patterns match whole names (anchored, like Prometheus relabelling): `edge-.*` matches `edge-1`
 * but not `my-edge-1`.
 *
 * The config holds only `{ source }` (plain data: it can be structured-cloned to a worker
 * thread, compared and printed); the compiled form is looked up (or rebuilt from the source) by
 * namePatternMatches() and compileStreamFilter().
 */
import { RE2JS } from 're2js';

/** A pattern of the config, by its source. */
export interface NamePattern {
  readonly source: string;
}

/** The stream filter of a server: `streams.include` / `streams.exclude`. */
export interface StreamFilterSources {
  readonly include?: NamePattern;
  readonly exclude?: NamePattern;
}

/** Longest pattern accepted: a longer one is no stream name filter but a mistake (or an attack). */
export const MAX_PATTERN_LENGTH = 4096;

/** Compiled patterns by source; bounded because cloned configs bring the same sources again. */
const compiled = new Map<string, RE2JS>();
const MAX_COMPILED = 1000;

/**
 * The one place a pattern is compiled. Returns the reason as a string when RE2 cannot take it.
 */
export function compileNamePattern(source: string): RE2JS | string {
  const cached = compiled.get(source);
  if (cached) return cached;
  if (source.length > MAX_PATTERN_LENGTH) return `longer than ${MAX_PATTERN_LENGTH} characters`;
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return `${message.replace(/^error parsing regexp: /, '')}${hint(source)}`;
  }
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(source, re);
  return re;
}

/** A pattern of a validated config (it compiled once already). */
export function namePatternMatches(pattern: NamePattern, name: string): boolean {
  const re = compileNamePattern(pattern.source);
  // Unreachable for a validated config; a pattern that cannot compile matches nothing.
  if (typeof re === 'string') return false;
  return re.matches(name);
}

/**
 * The stream filter as a predicate: include (when set) must match the whole name, exclude (when
 * set) must not. For a config that crossed a structured clone, this is where its patterns are
 * compiled again from their sources.
 */
export function compileStreamFilter(sources: StreamFilterSources): (name: string) => boolean {
  if (!sources.include && !sources.exclude) return () => true;
  return (name) => streamFilterPasses(sources, name);
}

/** Whether the stream filter lets this name through: the one test the streams and sessions collectors share. */
export function streamFilterPasses({ include, exclude }: StreamFilterSources, name: string): boolean {
  return (!include || namePatternMatches(include, name)) && (!exclude || !namePatternMatches(exclude, name));
}

/** What the RE2 syntax has instead, for the constructs people bring from Perl/JavaScript. */
function hint(source: string): string {
  if (/\(\?<?[=!]/.test(source)) return ' (RE2 syntax: lookahead and lookbehind are not supported)';
  if (/\\[1-9]|\\k</.test(source)) return ' (RE2 syntax: backreferences are not supported)';
  return ' (RE2 syntax, see README)';
}
