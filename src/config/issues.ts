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

/** Problems kept with their messages and shown; more are only counted (a hostile file may have millions). */
export const MAX_PROBLEMS_SHOWN = 100;

/** The kind of a YAML value, without the value: `a list`; with `scalar`, numbers and booleans shown: `a number (12)`. */
export function describeType(value: unknown, scalar = true): string {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'a mapping' : ['string', 'boolean', 'number'].includes(typeof value) ? `a ${typeof value}` : typeof value;
  return scalar && (typeof value === 'number' || typeof value === 'boolean') ? `${kind} (${String(value)})` : kind;
}

/** The problems of one validation: first those of `${VAR}` expansion, then the schema's. */
export class ValidationRun {
  readonly problems: PathProblem[] = [];
  /** Problems beyond MAX_PROBLEMS_SHOWN: counted, not kept. */
  more = 0;
  /** A value whose expansion failed was reported already: what the schema says of what is left would only repeat it. */
  private readonly failedPaths: ReadonlySet<string>;

  constructor(readonly expandedPaths: ReadonlySet<string>, expansionProblems: readonly PathProblem[]) {
    this.problems.push(...expansionProblems.slice(0, MAX_PROBLEMS_SHOWN));
    this.more = Math.max(0, expansionProblems.length - MAX_PROBLEMS_SHOWN);
    this.failedPaths = new Set(expansionProblems.map((p) => formatPath(p.segments)));
  }

  report(segments: readonly PathSegment[], message: string): void {
    if (this.failedPaths.size > 0 && this.failedPaths.has(formatPath(segments))) return;
    if (this.problems.length >= MAX_PROBLEMS_SHOWN) this.more++;
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
        const suggestion = this.problems.length >= MAX_PROBLEMS_SHOWN ? undefined : closestKey(key, known); // none for a problem only counted
        this.report([...path, key], suggestion ? `unknown key (did you mean ${suggestion}?)` : `unknown key (known keys: ${known.join(', ')})`);
      }
      return;
    }
    const shown = (): string => this.show(path, issue.input);
    const say = (issue.params as { say?: Say } | undefined)?.say ?? SAY.get(issue.inst as object);
    this.report(path, issue.code === 'invalid_type' && issue.input === undefined ? 'required' : say ? say(shown(), issue.input) : this.plain(issue, shown));
  }

  private plain(issue: z.core.$ZodRawIssue, shown: () => string): string {
    const input = issue.input;
    switch (issue.code) {
      case 'invalid_type':
        if (issue.expected === 'object') return `expected a mapping (key: value), got ${describeType(input)}`;
        if (issue.expected === 'array') return `expected a list, got ${describeType(input)}`;
        if (issue.expected === 'string') {
          const hint = typeof input === 'number' || typeof input === 'boolean' ? ' (put it in quotes)' : '';
          return `expected a string, got ${describeType(input, !SECRET.has(issue.inst as object))}${hint}`;
        }
        return `expected ${String(issue.expected)}, got ${shown()}`;
      case 'too_small':
        return issue.origin === 'string' ? 'must not be empty' : `must be at least ${String(issue.minimum)}, got ${String(input)}`;
      case 'invalid_value':
        return `expected one of ${issue.values.join(', ')}, got ${shown()}`;
      default:
        return issue.message ?? issue.code;
    }
  }
}
