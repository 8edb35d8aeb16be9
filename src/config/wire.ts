/**
 * Configs as plain data, for a worker thread (structured clone). A compiled pattern may be an
 * object that does not clone (a regex engine other than RegExp): it travels as its source and is
 * compiled again on the other side by compilePattern(), the one place patterns are compiled.
 */
import type { ServerConfig, StreamFilter } from './types.js';
import { compilePattern } from './values.js';

/** A ServerConfig with the stream filter's patterns as their (anchored) sources. */
export type ServerConfigData = Omit<ServerConfig, 'streams'> & {
  readonly streams: { readonly include?: string; readonly exclude?: string };
};

export function serverConfigData(config: ServerConfig): ServerConfigData {
  const { include, exclude } = config.streams;
  return {
    ...config,
    streams: { ...(include ? { include: include.source } : {}), ...(exclude ? { exclude: exclude.source } : {}) },
  };
}

export function serverConfigFromData(data: ServerConfigData): ServerConfig {
  const { include, exclude } = data.streams;
  const streams: StreamFilter = {
    ...(include !== undefined ? { include: compilePattern(include) } : {}),
    ...(exclude !== undefined ? { exclude: compilePattern(exclude) } : {}),
  };
  return { ...data, streams };
}
