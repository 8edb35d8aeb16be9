/**
 * Defaults of the bounds on what the exporter takes in and holds (label value length,
 * connections, discovered servers) and the bound of a target's name: plain data, declared here
 * once so that the schema (src/config/schema.ts) and the code that applies a bound to a config
 * made in code (tests, the demo) agree without loading the schema.
 */
export const DEFAULT_MAX_LABEL_VALUE_BYTES = 256;
export const DEFAULT_MAX_CONNECTIONS_PER_SERVER = 4;
export const DEFAULT_MAX_CONNECTIONS = 512;
export const DEFAULT_MAX_DISCOVERED = 1000;

/**
 * The longest name of a server or Catena service, configured or discovered, in UTF-16 code units
 * (JavaScript's string length). The event sink's route takes a server name of this length as its
 * path parameter (src/serve/app.ts).
 */
export const MAX_NAME_LENGTH = 128;
