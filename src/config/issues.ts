/**
 * zod's issues in the project's words, each with its path. Values are shown only where that helps
 * and is safe: never secrets or URLs, nor anything that came from an environment variable.
 */
import type { z } from 'zod';
import { SAY, SECRET, type Say } from './kinds.js';
import { formatPath, type PathSegment } from './path.js';
import { closestKey } from './suggest.js';

export interface PathProblem {
  readonly segments: readonly PathSegment[];
  readonly message: string;
}

/** Problems kept with their messages; more are only counted (the loader shows fewer still). */
export const MAX_PROBLEMS_KEPT = 1000;
/** Keys longer than this get no "did you mean" (edit distance is quadratic in the length). */
const MAX_SUGGESTED_KEY_LENGTH = 64;

/** The kind of a YAML value, without the value: `a number`, `a list`. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number' ? `a ${typeof value}` : typeof value;
}

/** The kind of a non-secret YAML value with scalars shown: `a number (12)`, `a boolean (true)`. */
export function describeType(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' ? `${typeName(value)} (${String(value)})` : typeName(value);
}

/** The problems of one validation. */
export class ValidationRun {
  readonly problems: PathProblem[] = [];
  /** Problems beyond MAX_PROBLEMS_KEPT: counted, not kept (a hostile file may have millions). */
  more = 0;
  constructor(readonly expandedPaths: ReadonlySet<string>) {}

  report(segments: readonly PathSegment[], message: string): void {
    if (this.problems.length >= MAX_PROBLEMS_KEPT) this.more++;
    else this.problems.push({ segments, message });
  }

  /** `"15x"` for messages, or a neutral word when the value must not be shown. */
  show(segments: readonly PathSegment[], value: unknown): string {
    if (this.expandedPaths.has(formatPath(segments))) return 'the value from the environment';
    if (typeof value === 'string') return value.length > 60 ? `${JSON.stringify(value.slice(0, 57))}...` : JSON.stringify(value);
    return describeType(value);
  }

  /** Reports one zod issue (an unknown-keys issue as one problem per key). */
  take(issue: z.core.$ZodRawIssue): void {
    const path = (issue.path ?? []) as PathSegment[];
    if (issue.code === 'unrecognized_keys') {
      const known = Object.keys((issue.inst as unknown as { _zod: { def: { shape: object } } })._zod.def.shape);
      for (const key of issue.keys) {
        // No suggestion for a key that is no typo (too long) or once the problems are only counted.
        const suggestion = this.problems.length >= MAX_PROBLEMS_KEPT || key.length > MAX_SUGGESTED_KEY_LENGTH ? undefined : closestKey(key, known);
        this.report([...path, key], suggestion ? `unknown key (did you mean ${suggestion}?)` : `unknown key (known keys: ${known.join(', ')})`);
      }
      return;
    }
    const shown = (): string => this.show(path, issue.input);
    const say = (issue.params as { say?: Say } | undefined)?.say ?? SAY.get(issue.inst as object);
    if (issue.code === 'invalid_type' && issue.input === undefined) this.report(path, 'required');
    else if (say) this.report(path, say(shown(), issue.input));
    else this.report(path, this.plain(issue, shown));
  }

  private plain(issue: z.core.$ZodRawIssue, shown: () => string): string {
    const input = issue.input;
    switch (issue.code) {
      case 'invalid_type':
        if (issue.expected === 'object') return `expected a mapping (key: value), got ${describeType(input)}`;
        if (issue.expected === 'array') return `expected a list, got ${describeType(input)}`;
        if (issue.expected === 'string') {
          const hint = typeof input === 'number' || typeof input === 'boolean' ? ' (put it in quotes)' : '';
          return `expected a string, got ${SECRET.has(issue.inst as object) ? typeName(input) : describeType(input)}${hint}`;
        }
        return `expected ${String(issue.expected)}, got ${shown()}`;
      case 'too_small':
        return issue.origin === 'string' ? 'must not be empty' : `must be at least ${String(issue.minimum)}, got ${String(input)}`;
      case 'invalid_value':
        return `expected one of ${issue.values.join(', ')}, got ${shown()}`;
      default:
        return issue.message ?? issue.code ?? 'invalid';
    }
  }
}
