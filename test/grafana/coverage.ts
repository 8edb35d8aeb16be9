/**
 * Which alerts can fire on a given exporter output: an alert can fire when every series name its
 * expression needs is present. What an expression needs is read from its text:
 *
 * - `a or b`: either side is enough (FlussonicStreamInputErrors fires on input errors or on
 *   dropped packets), so each side is an alternative;
 * - `a unless b`: only `a` is needed (`b` only silences);
 * - everything else (`a and b`, arithmetic, functions): every selector is needed.
 *
 * Recording rules count as present when Prometheus has recorded them, which is exactly when their
 * own inputs are present; so a needed name is a catalogue family, a recording rule or `up`.
 */
import { selectors } from './promql.js';

/** Splits an expression at the keyword `word` where it stands outside any bracket and string. */
function splitTopLevel(expr: string, word: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < expr.length; i += 1) {
    const c = expr[i]!;
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if ('([{'.includes(c)) depth += 1;
    else if (')]}'.includes(c)) depth -= 1;
    else if (
      depth === 0 &&
      expr.startsWith(word, i) &&
      !/[\w:]/.test(expr[i - 1] ?? ' ') &&
      !/[\w:]/.test(expr[i + word.length] ?? ' ')
    ) {
      parts.push(expr.slice(start, i));
      start = i + word.length;
      i = start - 1;
    }
  }
  parts.push(expr.slice(start));
  return parts;
}

/** The inside of an expression wholly in one pair of parentheses, or undefined. */
function inside(expr: string): string | undefined {
  const t = expr.trim();
  if (!t.startsWith('(')) return undefined;
  let depth = 0;
  for (let i = 0; i < t.length; i += 1) {
    if (t[i] === '(') depth += 1;
    if (t[i] === ')') depth -= 1;
    if (depth === 0) return i === t.length - 1 ? t.slice(1, -1) : undefined;
  }
  return undefined;
}

/**
 * The alternatives of an expression: each is a list of series names that, all present, let the
 * expression return something. Only `or` and `unless` at the top level (or inside parentheses
 * around a whole side) are read as such; deeper ones count every selector as needed.
 */
export function neededAlternatives(expr: string): string[][] {
  return splitTopLevel(expr, 'or').flatMap((branch) => {
    const needed = splitTopLevel(branch, 'unless')[0]!;
    const inner = inside(needed);
    if (inner !== undefined) return neededAlternatives(inner);
    return [[...new Set(selectors(needed).map((s) => s.metric).filter((m) => m !== ''))]];
  });
}

export interface AlertCoverage {
  readonly alert: string;
  readonly canFire: boolean;
  /** For an alert that cannot fire: the names missing from its most nearly complete alternative. */
  readonly missing: readonly string[];
}

export function alertCoverage(alert: string, expr: string, present: ReadonlySet<string>): AlertCoverage {
  const gaps = neededAlternatives(expr).map((names) => names.filter((n) => !present.has(n)));
  const best = gaps.reduce((a, b) => (b.length < a.length ? b : a));
  return { alert, canFire: best.length === 0, missing: best };
}
