/**
 * docs/configuration.md: every setting with its type, default, bounds, where it is allowed and its
 * help, read off the JSON Schema of the config (src/config/schema.ts declares it).
 */
import { configJsonSchema, type JsonSchema } from './config-schema.js';

const INTRO = `# Configuration reference

Generated from \`src/config/schema.ts\` by \`npm run docs:config\`: do not edit by hand.
[config.example.yaml](../config.example.yaml) is a commented example;
[config.schema.json](../config.schema.json) lets editors check and complete a config file (the
example's first line shows how).

- **Durations**: a number with a unit: \`500ms\`, \`15s\`, \`2m\`, \`1h\`, \`30d\`, and compounds like \`1h30m\`
  (a bare number is refused: \`10\` could mean seconds or milliseconds).
- **Sizes**: \`64MiB\`, \`512KiB\`, \`500KB\` (= 500,000 bytes), or a number of bytes.
- **Environment**: \`\${VAR}\` in any value is replaced by the variable (an unset one is an error;
  \`$\${\` writes a literal \`\${\`). Values from the environment are never shown in messages.
- **Secrets**: every \`*_file\` key reads the secret from a file (at most 64 KiB, trailing newline
  trimmed); relative paths are resolved against the config file's directory.
- **Shared settings**: top-level keys starting with \`x-\` are ignored: define settings there once as
  a YAML anchor and merge them into entries with \`<<: *anchor\`.
- **Problems**: every problem is reported at once with its path and line (the first 100 of them),
  and \`--check-config\` exits with code 2 when there are any.
`;

const code = (value: unknown): string => `\`${typeof value === 'string' ? value : JSON.stringify(value).replace(/"/g, '')}\``;

function typeOf(s: JsonSchema): string {
  if (s.enum) return `one of ${s.enum.map(code).join(', ')}`;
  if (s.title) return s.title;
  if (s.type === 'array') return `list of ${s.items ? typeOf(s.items) : 'values'}`;
  if (s.type === 'object') return s.properties ? 'mapping' : 'mapping of NAME to mapping';
  return Array.isArray(s.type) ? s.type.join(' or ') : String(s.type ?? 'any');
}

function boundsOf(s: JsonSchema): string {
  const min = s.minimum ?? s['x-minimum'];
  const max = s.maximum;
  if (min !== undefined && max !== undefined) return `${String(min)} to ${String(max)}`;
  if (min !== undefined) return `at least ${String(min)}`;
  return typeof s.minItems === 'number' && s.minItems > 0 ? `at least ${s.minItems} item` : '';
}

function defaultOf(s: JsonSchema, required: boolean): string {
  if (required || (typeof s.minItems === 'number' && s.minItems > 0)) return 'required';
  if (s.default === undefined || (typeof s.default === 'object' && s.default !== null && Object.keys(s.default).length === 0 && !Array.isArray(s.default))) return '';
  return code(s.default);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** One table per mapping of the file, named by where it is (`servers[]`, `templates.NAME`, ...). */
function sections(s: JsonSchema, where: string, about: string, out: string[]): void {
  const rows: string[] = [];
  const nested: [JsonSchema, string, string][] = [];
  for (const [key, p] of Object.entries(s.properties ?? {})) {
    const at = where === '' ? key : `${where}.${key}`;
    rows.push(`| \`${key}\` | ${cell(typeOf(p))} | ${cell(defaultOf(p, s.required?.includes(key) ?? false))} | ${cell(boundsOf(p))} | ${cell(p.description ?? '')} |`);
    const about = p.description ?? '';
    if (p.properties) nested.push([p, at, about]);
    else if (p.items?.properties) nested.push([p.items, `${at}[]`, about]);
    else if (typeof p.additionalProperties === 'object' && p.additionalProperties.properties) nested.push([p.additionalProperties, `${at}.NAME`, about]);
  }
  out.push(`## ${where === '' ? 'Top level' : `\`${where}\``}`, '', ...(about === '' ? [] : [about, '']));
  out.push('| key | type | default | bounds | meaning |', '|---|---|---|---|---|', ...rows, '');
  for (const [child, at, text] of nested) sections(child, at, text, out);
}

export function renderConfigMarkdown(schema: JsonSchema = configJsonSchema()): string {
  const out = [INTRO];
  sections(schema, '', '', out);
  return `${out.join('\n').trimEnd()}\n`;
}
