/** The validated config types, inferred from the schema (schema.ts). */
export type * from './schema.js';
export type { StreamFilterSources } from '../lib/name-pattern.js';
