/**
 * The process logger. Redaction is a second line of defence: credentials are kept out of log
 * calls by construction (errors carry target names, not URLs or headers), and anything that still
 * arrives under a credential-like key is censored before it is written.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { ExporterConfig } from './config/index.js';
import { logfmtLine } from './lib/logfmt.js';

/** How log lines are written: JSON objects (pino's, the default) or logfmt `key=value` lines. */
export const LOG_FORMATS = ['json', 'logfmt'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

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

/**
 * Where the process logger writes: stdout, each line turned into logfmt for `logfmt`. A small
 * synchronous formatter rather than a pino transport (pino-logfmt): a transport runs in a thread of
 * its own, writes asynchronously (lines still queued at process.exit are lost without extra flush
 * handling), and the worker threads' lines reach this destination as finished JSON lines anyway,
 * so one formatter at the point of writing covers both.
 */
export function logDestination(format: LogFormat, out: DestinationStream = pino.destination({ dest: 1, sync: true })): DestinationStream | undefined {
  // JSON: pino's own default destination, as without the flag.
  if (format === 'json') return undefined;
  return { write: (line: string) => out.write(logfmtLine(line)) };
}
