/**
 * config.example.yaml: every setting with its example (or default) and help, read off the JSON
 * Schema of the config (src/config/schema.ts declares both). A setting with neither is shown
 * commented out.
 */
import { stringify } from 'yaml';
import { configJsonSchema, type JsonSchema } from './config-schema.js';

const HEADER = `# yaml-language-server: $schema=./config.schema.json
# flussonic-exporter configuration: every option, with an example or its default. Generated from
# src/config/schema.ts by \`npm run docs:config\`; the reference is docs/configuration.md.
# Check a file with: flussonic-exporter --config FILE --check-config
# Durations: 500ms, 15s, 2m, 1h, 30d (and compounds like 1h30m). \${VAR} expands an environment
# variable (an unset one is an error; $\${ writes a literal \${). Relative file paths are resolved
# against the directory of this file. SIGHUP reloads the file. Top-level keys starting with x- are
# ignored: define shared settings there once and merge them into servers with \`<<: *anchor\`.
`;

const COMMENT_COLUMN = 35;

const scalar = (value: unknown): string => stringify(value).trimEnd();
const yamlValue = (value: unknown): string => (Array.isArray(value) ? `[${value.map(scalar).join(', ')}]` : scalar(value));

function line(indent: string, text: string, help: string | undefined): string {
  const head = `${indent}${text}`;
  return help ? `${head.padEnd(COMMENT_COLUMN - 1)} # ${help}` : head;
}

/** The lines of one mapping; `first` prefixes its first key (`- ` of a list item). */
function mappingLines(s: JsonSchema, indent: string, first = ''): string[] {
  const out: string[] = [];
  for (const [key, p] of Object.entries(s.properties ?? {})) {
    const lead = out.length === 0 ? first : ' '.repeat(first.length);
    const at = `${indent}${lead}`;
    const record = typeof p.additionalProperties === 'object' ? p.additionalProperties : undefined;
    const example = p['x-example'] ?? p.default;
    if (p.properties) {
      // A mapping with every key commented out is commented out too (an empty one would be null).
      const inner = mappingLines(p, `${at}  `);
      out.push(line(at, `${inner.every((l) => l.trimStart().startsWith('#')) ? '# ' : ''}${key}:`, p.description), ...inner);
    }
    else if (p.items?.properties) out.push(line(at, `${key}:`, p.description), ...mappingLines(p.items, `${at}  `, '- '));
    else if (record?.properties) {
      const [name, about] = (p['x-name'] as [string, string] | undefined) ?? ['NAME', ''];
      out.push(line(at, `${key}:`, p.description), line(`${at}  `, `${name}:`, about), ...mappingLines(record, `${at}    `));
    } else if (example !== undefined && !(Array.isArray(example) && example.length === 0)) out.push(line(at, `${key}: ${yamlValue(example)}`, p.description));
    else out.push(line(at, `# ${key}: <${p.title ?? String(p.type)}>`, p.description));
  }
  return out;
}

export function renderConfigExample(schema: JsonSchema = configJsonSchema()): string {
  const top = mappingLines(schema, '');
  // A blank line before each top-level list or mapping.
  return `${HEADER}\n${top.map((l, i) => (i > 0 && /^[a-z_]+:\s*(#|$)/.test(l) ? `\n${l}` : l)).join('\n')}\n`;
}
