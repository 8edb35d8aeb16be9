/**
 * Just enough PromQL scanning for the generator (which families a panel reads: families.ts) and
 * the dashboard and rule lint (test/grafana): which metric names an expression selects, with which
 * label matchers, and which range windows it uses. Whether an expression parses at all is
 * promtool's job (see test/grafana/dashboards.test.ts); this only reads what a valid expression
 * refers to. Grafana variables (`$job`, `${job}`, `$__rate_interval`) are tokens of
 * their own, so raw dashboard queries can be scanned before substitution.
 */

export type TokenKind = 'ident' | 'string' | 'number' | 'variable' | 'punct';

export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
}

export interface Matcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

export interface Selector {
  /** The metric name, or '' for a selector with only matchers and no __name__="...". */
  readonly metric: string;
  readonly matchers: readonly Matcher[];
}

const AGGREGATIONS = new Set([
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile',
]);
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2']);
const NUMBER_WORDS = new Set(['inf', 'nan']);
const OPERATORS = ['=~', '!~', '!=', '==', '>=', '<=', '=', '>', '<', '+', '-', '*', '/', '%', '^', '@'];

export function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === '#') {
      while (i < expr.length && expr[i] !== '\n') i += 1;
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      let value = '';
      while (j < expr.length && expr[j] !== c) {
        if (expr[j] === '\\' && c !== '`') {
          value += expr[j + 1] ?? '';
          j += 2;
        } else {
          value += expr[j];
          j += 1;
        }
      }
      if (j >= expr.length) throw new Error(`unterminated string in ${expr}`);
      tokens.push({ kind: 'string', text: value });
      i = j + 1;
    } else if (c === '$') {
      const m = /^\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)/.exec(expr.slice(i));
      if (!m) throw new Error(`bad variable at ${i} in ${expr}`);
      tokens.push({ kind: 'variable', text: m[0] });
      i += m[0].length;
    } else if (/[0-9.]/.test(c)) {
      const m = /^[0-9.][0-9a-zA-Z.+]*/.exec(expr.slice(i))!;
      // 1e+3 is one number, but `5m+1` would swallow the operator: only allow + after an e.
      const text = m[0].replace(/(?<![eE])\+.*$/, '');
      tokens.push({ kind: 'number', text });
      i += text.length;
    } else if (/[A-Za-z_:]/.test(c)) {
      const m = /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(expr.slice(i))!;
      tokens.push({ kind: NUMBER_WORDS.has(m[0].toLowerCase()) ? 'number' : 'ident', text: m[0] });
      i += m[0].length;
    } else {
      const op = OPERATORS.find((o) => expr.startsWith(o, i));
      const text = op ?? c;
      if (!op && !'(){}[],'.includes(c)) throw new Error(`unexpected ${c} at ${i} in ${expr}`);
      tokens.push({ kind: 'punct', text });
      i += text.length;
    }
  }
  return tokens;
}

function skipBalanced(tokens: Token[], start: number, open: string, close: string): number {
  let depth = 0;
  for (let i = start; i < tokens.length; i += 1) {
    if (tokens[i]!.text === open && tokens[i]!.kind === 'punct') depth += 1;
    if (tokens[i]!.text === close && tokens[i]!.kind === 'punct') depth -= 1;
    if (depth === 0) return i + 1;
  }
  throw new Error(`unbalanced ${open}${close}`);
}

function readMatchers(tokens: Token[], start: number): { matchers: Matcher[]; next: number } {
  const matchers: Matcher[] = [];
  let i = start + 1; // after {
  while (i < tokens.length && tokens[i]!.text !== '}') {
    const label = tokens[i]!;
    const op = tokens[i + 1];
    const value = tokens[i + 2];
    if (!op || !value || !['=', '!=', '=~', '!~'].includes(op.text) || value.kind !== 'string') {
      throw new Error(`bad label matcher near ${label.text}`);
    }
    matchers.push({ label: label.text, op: op.text as Matcher['op'], value: value.text });
    i += 3;
    if (tokens[i]?.text === ',') i += 1;
  }
  return { matchers, next: i + 1 };
}

/** Every vector selector of an expression, in order. */
export function selectors(expr: string): Selector[] {
  const tokens = tokenize(expr);
  const found: Selector[] = [];
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    if (t.kind === 'punct' && t.text === '[') {
      i = skipBalanced(tokens, i, '[', ']');
    } else if (t.kind === 'punct' && t.text === '{') {
      const { matchers, next: after } = readMatchers(tokens, i);
      const name = matchers.find((m) => m.label === '__name__' && m.op === '=');
      found.push({ metric: name?.value ?? '', matchers });
      i = after;
    } else if (t.kind === 'ident') {
      const word = t.text.toLowerCase();
      if (GROUPING.has(word)) {
        i = next?.text === '(' ? skipBalanced(tokens, i + 1, '(', ')') : i + 1;
      } else if (KEYWORDS.has(word) || next?.text === '(' || (AGGREGATIONS.has(word) && next && GROUPING.has(next.text))) {
        i += 1;
      } else if (next?.text === '{') {
        const { matchers, next: after } = readMatchers(tokens, i + 1);
        found.push({ metric: t.text, matchers });
        i = after;
      } else {
        found.push({ metric: t.text, matchers: [] });
        i += 1;
      }
    } else {
      i += 1;
    }
  }
  return found;
}

/** The text inside every `[...]` of an expression (range windows). */
export function rangeWindows(expr: string): string[] {
  const tokens = tokenize(expr);
  const windows: string[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    if (tokens[i]!.text !== '[') continue;
    const end = skipBalanced(tokens, i, '[', ']');
    windows.push(tokens.slice(i + 1, end - 1).map((t) => t.text).join(''));
    i = end - 1;
  }
  return windows;
}

/** The selector inside a Grafana `label_values(<selector>, <label>)` variable query. */
export function labelValuesQuery(query: string): { selector: string; label: string } {
  const m = /^\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$/s.exec(query);
  if (!m) throw new Error(`not a label_values() query: ${query}`);
  return { selector: m[1]!, label: m[2]! };
}

/**
 * Replaces Grafana variables in a query: `$__rate_interval`, `$__interval`, `$__range` by the
 * windows given, `$name` / `${name}` by the values given (already in the form the query needs,
 * e.g. a regular expression for `=~` matchers). Throws on a variable it has no value for.
 */
export function substituteVariables(expr: string, values: Readonly<Record<string, string>>): string {
  return expr.replace(/\$(\{([A-Za-z_][A-Za-z0-9_]*)(:[^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))/g, (whole, _b, braced, _fmt, bare) => {
    const name = (braced ?? bare) as string;
    const value = values[name];
    if (value === undefined) throw new Error(`no value for ${whole} in ${expr}`);
    return value;
  });
}

/** A regular expression that matches exactly the given values (how Grafana renders multi-select). */
export function regexOf(values: readonly string[]): string {
  const escaped = values.map((v) => v.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return escaped.length === 1 ? escaped[0]! : `(${escaped.join('|')})`;
}

/** The same, escaped for a PromQL double-quoted string. */
export function promqlRegexOf(values: readonly string[]): string {
  return regexOf(values).replace(/\\/g, '\\\\');
}
