/**
 * Defaults of the bounds on what the exporter takes in and holds (label value length,
 * connections, discovered servers): plain data, declared here once so that the schema
 * (src/config/schema.ts) and the code that applies a bound to a config made in code (tests, the
 * demo) agree without loading the schema.
 */
export const DEFAULT_MAX_LABEL_VALUE_BYTES = 256;
export const DEFAULT_MAX_CONNECTIONS_PER_SERVER = 4;
export const DEFAULT_MAX_CONNECTIONS = 512;
export const DEFAULT_MAX_DISCOVERED = 1000;
