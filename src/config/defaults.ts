/** What is read off the schema: the JSON Schema of the file, the keys of each mapping, the defaults. */
import { z } from 'zod';
import { configSchema, type SchemaContext } from './schema.js';

/** A context for reading the schema itself (no file is validated with it). */
const SCHEMA_ONLY: SchemaContext = { baseDir: '/', reservedPaths: [], pollIntervalMs: 15_000, templateNames: [] };

export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly items?: JsonSchema;
  readonly additionalProperties?: JsonSchema | boolean;
  readonly patternProperties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly description?: string;
  readonly title?: string;
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly enum?: readonly unknown[];
  readonly [keyword: string]: unknown;
}

/** config.schema.json: what editors check and complete config files with. */
export function configJsonSchema(): JsonSchema {
  const schema = z.toJSONSchema(configSchema(SCHEMA_ONLY), { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  // `x-` keys at the top hold YAML anchors (merged into servers with `<<`).
  return { ...schema, title: 'flussonic-exporter config', patternProperties: { '^x-': {} } };
}

/** config.schema.json as written (a test compares it with the file). */
export const configJsonSchemaText = (): string => `${JSON.stringify(configJsonSchema(), null, 2)}\n`;

const top = configJsonSchema();
const props = (schema: JsonSchema | undefined): Readonly<Record<string, JsonSchema>> => schema?.properties ?? {};
const keys = (schema: JsonSchema | undefined): readonly string[] => Object.keys(props(schema));
const P = props(top);
const server = P.servers?.items;
const catena = P.catena?.items;
const discovery = P.discovery;

/** Keys known at each level of the YAML (unknown keys are rejected with the closest of these). */
export const KNOWN_KEYS = Object.freeze({
  top: keys(top),
  server: keys(server),
  template: keys(P.templates?.additionalProperties as JsonSchema),
  discovery: keys(discovery),
  discoveryClusterPeers: keys(props(discovery).cluster_peers?.items),
  discoveryFileSd: keys(props(discovery).file_sd?.items),
  serverCollectors: keys(props(server).collectors),
  serverStreams: keys(props(server).streams),
  serverFamilies: keys(props(server).families),
  serverSessions: keys(props(server).sessions),
  catena: keys(catena),
  catenaQuery: keys(props(catena).query),
  catenaPrice: keys(props(catena).prices?.additionalProperties as JsonSchema),
});

const probe = configSchema(SCHEMA_ONLY).parse({ servers: [{ name: 'defaults', url: 'http://localhost' }] });

/** The defaults other modules need as values (the schema has them all). */
export const DEFAULTS = Object.freeze({
  listenPort: probe.listenAddress.port,
  metricsPath: probe.metricsPath,
  workers: probe.workers,
  server: Object.freeze({ collectors: probe.servers[0]!.collectors, families: probe.servers[0]!.families }),
});
