/**
 * logfmt lines (`ts=... level=info msg="..." key=value`) from pino's JSON lines, as the Prometheus
 * exporters write them with `--log.format logfmt`. The exporter's logger and its worker threads
 * write JSON; this turns each finished line into logfmt where it is written, so the worker lines
 * (already JSON when they reach the main thread) come out in the same format.
 *
 * Nested objects are flattened to dotted keys (`address.port=9228`); arrays are written as their
 * JSON text. A value is quoted when it is empty or holds a space, `=`, `"` or a control character;
 * newlines in values (error stacks) are escaped, so one entry stays one line.
 */

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** One pino JSON line (with or without its newline) as one logfmt line ending in a newline. */
export function logfmtLine(jsonLine: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(jsonLine);
  } catch {
    // Not JSON (never written by pino): passed on as it came, as one line.
    return jsonLine.endsWith('\n') ? jsonLine : `${jsonLine}\n`;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return `${jsonLine.trimEnd()}\n`;
  const { time, level, msg, ...rest } = entry as Record<string, unknown>;
  const pairs: string[] = [];
  if (time !== undefined) pairs.push(pair('ts', time));
  if (level !== undefined) pairs.push(pair('level', typeof level === 'number' ? (LEVEL_NAMES[level] ?? String(level)) : level));
  if (msg !== undefined) pairs.push(pair('msg', msg));
  flatten('', rest, pairs);
  return `${pairs.join(' ')}\n`;
}

function flatten(prefix: string, object: Record<string, unknown>, pairs: string[]): void {
  for (const [key, value] of Object.entries(object)) {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) flatten(name, value as Record<string, unknown>, pairs);
    else pairs.push(pair(name, value));
  }
}

function pair(key: string, value: unknown): string {
  return `${quote(key.replace(/[\s="]/g, '_'))}=${quote(text(value))}`;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value) ?? String(value);
}

function quote(value: string): string {
  // eslint-disable-next-line no-control-regex
  if (value !== '' && !/[\s="\\\u0000-\u001f\u007f]/.test(value)) return value;
  // JSON string escapes: \" \\ \n \t and \u00XX for the other control characters.
  return JSON.stringify(value);
}
