/**
 * `${VAR}` expansion in string values of the parsed config. It runs on values, not on the YAML
 * text, so an environment variable can never change the structure of the file. `$${` writes a
 * literal `${`. A variable that is not set is an error naming it (never its value: it may be a
 * secret); an empty variable is set and expands to ''.
 */
import type { PathProblem } from './issues.js';
import type { PathSegment } from './path.js';

export type Environment = Readonly<Record<string, string | undefined>>;

export interface ExpandedTree {
  readonly value: unknown;
  /** Paths (formatted) whose value came from at least one variable: never echoed in messages. */
  readonly expandedPaths: ReadonlySet<string>;
  readonly problems: readonly PathProblem[];
}

const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Expands every string in a tree of plain YAML values (objects, arrays, scalars). */
export function expandEnvironment(tree: unknown, env: Environment, formatPath: (segments: readonly PathSegment[]) => string): ExpandedTree {
  const expandedPaths = new Set<string>();
  const problems: PathProblem[] = [];

  const expandString = (text: string, segments: readonly PathSegment[]): string => {
    if (!text.includes('${')) return text;
    let usedVariable = false;
    const result = text.replace(REFERENCE, (match: string, name: string | undefined) => {
      if (match === '$${') return '${';
      if (name === undefined) {
        problems.push({ segments, message: 'unterminated ${ (write $${ for a literal ${)' });
        return '';
      }
      if (!VARIABLE_NAME.test(name)) {
        problems.push({ segments, message: `\${${name}} is not a valid variable reference (use \${NAME} with letters, digits and _)` });
        return '';
      }
      const value = env[name];
      if (value === undefined) {
        problems.push({ segments, message: `environment variable ${name} is not set` });
        return '';
      }
      usedVariable = true;
      return value;
    });
    if (usedVariable) expandedPaths.add(formatPath(segments));
    return result;
  };

  const walk = (node: unknown, segments: readonly PathSegment[]): unknown => {
    if (typeof node === 'string') return expandString(node, segments);
    if (Array.isArray(node)) return node.map((item, index) => walk(item, [...segments, index]));
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(node)) out[key] = walk(value, [...segments, key]);
      return out;
    }
    return node;
  };

  return { value: walk(tree, []), expandedPaths, problems };
}
