/**
 * The process logger. Redaction is a second line of defence: credentials are kept out of log
 * calls by construction (errors carry target names, not URLs or headers), and anything that still
 * arrives under a credential-like key is censored before it is written.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { ExporterConfig } from './config/index.js';

const SECRET_KEYS = ['password', 'token', 'apiKey', 'api_key', 'bearer_token', 'credentials', 'authorization', 'Authorization', 'x-auth-token', 'X-Auth-Token'];

/** `prefix.key`, or `prefix["key"]` for keys that are not identifiers (pino's redact syntax). */
function keyPath(prefix: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return prefix === '' ? key : `${prefix}.${key}`;
  return `${prefix}["${key}"]`;
}

/** Any of the keys at the top level, one or two levels down, and in request/response headers. */
export const REDACT_PATHS: readonly string[] = ['', '*', '*.*', '*.headers', '*.*.headers'].flatMap((prefix) => SECRET_KEYS.map((key) => keyPath(prefix, key)));

export function createLogger(level: ExporterConfig['logLevel'], destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
