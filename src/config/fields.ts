/**
 * Reading one YAML mapping of the config into typed values. Every problem is recorded with its
 * path and reading goes on, so a user sees all problems at once instead of one per attempt.
 *
 * Values are echoed in messages only where that helps and is safe: never for secrets, URLs or
 * anything that came from an environment variable.
 */
import { parseDuration } from './duration.js';
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

/** Shared by every section of one validation run. */
export class ValidationRun {
  readonly problems: PathProblem[] = [];
  /** Problems beyond MAX_PROBLEMS_KEPT: counted, not kept (a hostile file may have millions). */
  more = 0;
  constructor(
    /** Formatted paths whose values came from `${VAR}` expansion. */
    readonly expandedPaths: ReadonlySet<string>,
  ) {}

  report(segments: readonly PathSegment[], message: string): void {
    if (this.full) this.more++;
    else this.problems.push({ segments, message });
  }

  get full(): boolean {
    return this.problems.length >= MAX_PROBLEMS_KEPT;
  }

  /** `"15x"` for messages, or a neutral word when the value must not be shown. */
  show(segments: readonly PathSegment[], value: unknown): string {
    if (this.expandedPaths.has(formatPath(segments))) return 'the value from the environment';
    if (typeof value === 'string') return value.length > 60 ? `${JSON.stringify(value.slice(0, 57))}...` : JSON.stringify(value);
    return describeType(value);
  }
}

/** The kind of a YAML value, without the value: `a number`, `a list`. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'number') return 'a number';
  return typeof value;
}

/** The kind of a non-secret YAML value with scalars shown: `a number (12)`, `a boolean (true)`. */
export function describeType(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeName(value)} (${String(value)})`;
  return typeName(value);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** One mapping of the config (the top level, `servers[0]`, `servers[0].streams`, ...). */
export class Section {
  private constructor(
    readonly run: ValidationRun,
    readonly segments: readonly PathSegment[],
    private readonly raw: Readonly<Record<string, unknown>>,
  ) {}

  /**
   * The mapping at a path; undefined (with a problem recorded) when it is something else.
   * An absent or null value gives an empty section, so defaults apply.
   */
  static of(run: ValidationRun, segments: readonly PathSegment[], value: unknown): Section | undefined {
    if (value === undefined || value === null) return new Section(run, segments, {});
    if (!isMapping(value)) {
      run.report(segments, `expected a mapping (key: value), got ${describeType(value)}`);
      return undefined;
    }
    return new Section(run, segments, value);
  }

  get path(): string {
    return formatPath(this.segments);
  }

  at(key: string): PathSegment[] {
    return [...this.segments, key];
  }

  has(key: string): boolean {
    return this.raw[key] !== undefined && this.raw[key] !== null;
  }

  keys(): string[] {
    return Object.keys(this.raw);
  }

  value(key: string): unknown {
    return this.raw[key];
  }

  report(key: string | undefined, message: string): void {
    this.run.report(key === undefined ? this.segments : this.at(key), message);
  }

  /** Reports every key not in `known`, with the closest known key as a suggestion. */
  rejectUnknownKeys(known: readonly string[], isExtension: (key: string) => boolean = () => false): void {
    for (const key of Object.keys(this.raw)) {
      if (known.includes(key) || isExtension(key)) continue;
      // No suggestion for a key that is no typo (too long) or once the problems are only counted.
      const suggestion = this.run.full || key.length > MAX_SUGGESTED_KEY_LENGTH ? undefined : closestKey(key, known);
      this.report(key, suggestion ? `unknown key (did you mean ${suggestion}?)` : `unknown key (known keys: ${known.join(', ')})`);
    }
  }

  /** A string; `secret` keeps the value out of every message. */
  string(key: string, options: { required?: boolean; secret?: boolean; allowEmpty?: boolean } = {}): string | undefined {
    const value = this.raw[key];
    if (value === undefined || value === null) {
      if (options.required) this.report(key, 'required');
      return undefined;
    }
    if (typeof value === 'number' && !options.secret) return String(value);
    if (typeof value !== 'string') {
      const quoteHint = typeof value === 'number' || typeof value === 'boolean' ? ' (put it in quotes)' : '';
      this.report(key, `expected a string, got ${options.secret ? typeName(value) : describeType(value)}${quoteHint}`);
      return undefined;
    }
    if (value === '' && !options.allowEmpty) {
      this.report(key, 'must not be empty');
      return undefined;
    }
    return value;
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.raw[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string' && this.run.expandedPaths.has(formatPath(this.at(key)))) {
      if (value === 'true') return true;
      if (value === 'false') return false;
    }
    this.report(key, `expected true or false, got ${this.run.show(this.at(key), value)}`);
    return fallback;
  }

  /** An integer within bounds; a string is accepted only when it came from `${VAR}`. */
  int(key: string, fallback: number, bounds: { min: number; max: number }): number {
    let value = this.raw[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'string' && this.run.expandedPaths.has(formatPath(this.at(key))) && /^\s*-?\d+\s*$/.test(value)) value = Number(value);
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.report(key, `expected an integer, got ${this.run.show(this.at(key), value)}`);
      return fallback;
    }
    if (value < bounds.min || value > bounds.max) {
      this.report(key, `must be between ${bounds.min} and ${bounds.max}, got ${value}`);
      return fallback;
    }
    return value;
  }

  /** A finite number >= min. */
  number(key: string, options: { min: number; required?: boolean }): number | undefined {
    let value = this.raw[key];
    if (value === undefined || value === null) {
      if (options.required) this.report(key, 'required');
      return undefined;
    }
    if (typeof value === 'string' && this.run.expandedPaths.has(formatPath(this.at(key))) && value.trim() !== '') value = Number(value);
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.report(key, `expected a number, got ${this.run.show(this.at(key), value)}`);
      return undefined;
    }
    if (value < options.min) {
      this.report(key, `must be at least ${options.min}, got ${value}`);
      return undefined;
    }
    return value;
  }

  /** A duration in ms (`500ms`, `15s`, `2m`, `1h`, `30d`, `1h30m`), at least `minMs`. */
  duration(key: string, options: { minMs: number; required?: boolean }): number | undefined {
    const value = this.raw[key];
    if (value === undefined || value === null) {
      if (options.required) this.report(key, 'required');
      return undefined;
    }
    const ms = typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined) {
      const hint = typeof value === 'number' ? ' (add a unit)' : '';
      this.report(key, `${this.run.show(this.at(key), value)} is not a duration${hint}: use a number with a unit, e.g. 500ms, 15s, 2m, 1h`);
      return undefined;
    }
    if (ms < options.minMs) {
      this.report(key, `must be at least ${options.minMs}ms, got ${this.run.show(this.at(key), value)}`);
      return undefined;
    }
    return ms;
  }

  /** One of a fixed set of strings. */
  oneOf<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
    this.report(key, `expected one of ${allowed.join(', ')}, got ${this.run.show(this.at(key), value)}`);
    return fallback;
  }

  /** A sub-mapping (absent: an empty section, so its defaults apply). */
  section(key: string): Section | undefined {
    return Section.of(this.run, this.at(key), this.raw[key]);
  }

  /** A list; absent gives []. */
  list(key: string): unknown[] {
    const value = this.raw[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.report(key, `expected a list, got ${describeType(value)}`);
      return [];
    }
    return value;
  }
}
