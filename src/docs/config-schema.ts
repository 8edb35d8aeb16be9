/** What is read off the config schema for editors, docs and tests: the JSON Schema of the file and the keys of each mapping. */
import { z } from 'zod';
import { configSchema, SCHEMA_ONLY } from '../config/index.js';

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

