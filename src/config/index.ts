/** The config module: loadConfig() and validateConfig() make the only ExporterConfig values. */
export { loadConfig, parseConfigText, type LoadOptions, type ParseOptions } from './load.js';
export { validateConfig, checkConfig, type ValidateOptions } from './validate.js';
export { metricsPathProblem, parseExternalAddress, parseListenAddress, type ListenAddress } from './values.js';
export { DEFAULTS, SCHEMA_ONLY } from './defaults.js';
export { configSchema, LOG_LEVELS } from './schema.js';
export { COLLECTOR_NAMES, STREAM_FAMILY_GROUPS } from './switches.js';
export type * from './schema.js';
export { compileStreamFilter, namePatternMatches, MAX_PATTERN_LENGTH, type NamePattern, type StreamFilterSources } from '../lib/name-pattern.js';
