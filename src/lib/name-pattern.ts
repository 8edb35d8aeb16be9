/**
 * Name patterns (the config's `streams.include` / `exclude`, file_sd label filters), compiled by
 * RE2's rules (re2js): matching takes time linear in the name whatever the pattern, where a
 * backtracking RegExp can take seconds on `(a+)+b`. RE2 has no backreferences and no lookaround;
 * a pattern using them is refused with a hint. Patterns match whole names, like Prometheus
 * relabelling. A config holds only `{ source }` (plain data that crosses to worker threads); the
 * compiled form is cached here by source.
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
