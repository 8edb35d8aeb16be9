/**
 * `${VAR}` expansion in string values of the parsed config. It runs on values, not on the YAML
 * text, so an environment variable can never change the structure of the file. `$${` writes a
 * literal `${`. A variable that is not set is an error naming it (never its value: it may be a
 * secret); an empty variable is set and expands to ''.
 */
import type { PathProblem } from './issues.js';
import { isMapping } from './kinds.js';
import { formatPath, type PathSegment } from './path.js';

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
export function expandEnvironment(tree: unknown, env: Environment): ExpandedTree {
  const expandedPaths = new Set<string>();
  const problems: PathProblem[] = [];
  const walk = (node: unknown, segments: readonly PathSegment[]): unknown => {
    if (Array.isArray(node)) return node.map((item, index) => walk(item, [...segments, index]));
    if (isMapping(node)) return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value, [...segments, key])]));
    if (typeof node !== 'string' || !node.includes('${')) return node;
    return node.replace(REFERENCE, (match: string, name: string | undefined) => {
      if (match === '$${') return '${';
      const problem =
        name === undefined ? 'unterminated ${ (write $${ for a literal ${)'
        : !VARIABLE_NAME.test(name) ? `\${${name}} is not a valid variable reference (use \${NAME} with letters, digits and _)`
        : env[name] === undefined ? `environment variable ${name} is not set`
        : undefined;
      if (problem !== undefined) problems.push({ segments, message: problem });
      else expandedPaths.add(formatPath(segments));
      return problem === undefined ? env[name!]! : '';
    });
  };
  return { value: walk(tree, []), expandedPaths, problems };
}
