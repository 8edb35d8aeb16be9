/** The config module: loadConfig() and validateConfig() make the only ExporterConfig values. */
export { loadConfig, parseConfigText, type ParseOptions } from './load.js';
export { validateConfig, checkConfig, type ValidateOptions } from './validate.js';
export { parseListenAddress, type ListenAddress } from './values.js';
export { parseDuration, formatDuration } from './duration.js';
export { DEFAULTS, KNOWN_KEYS, LOG_LEVELS, COLLECTOR_NAMES } from './defaults.js';
export type * from './types.js';
export { compileStreamFilter, namePatternMatches, MAX_PATTERN_LENGTH, type NamePattern, type StreamFilterSources } from './regex.js';
