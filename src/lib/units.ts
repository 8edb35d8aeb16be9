/**
 * Durations and byte sizes as the config and the command line write them: `500ms`, `15s`, `2m`,
 * `1h`, `30d`, and compounds like `1h30m`. A bare number is refused on purpose: `timeout: 10` could
 * mean seconds or milliseconds, and guessing wrong is worse than asking for a unit.
 */

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;
/** The same syntax as a JSON Schema pattern (for editors). */
export const DURATION_PATTERN = `^\\s*(?:${DURATION_PART.source})+\\s*$`;

/** Milliseconds of a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const source = text.trim();
  if (source === '') return undefined;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < source.length) {
    const match = DURATION_PART.exec(source);
    if (!match) return undefined;
    total += Number(match[1]) * (DURATION_UNITS_MS[match[2]!] ?? Number.NaN);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

/** The shortest exact form of a duration for messages: 90000 -> `1m30s`, 500 -> `500ms`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000], ['ms', 1]] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1, b: 1,
  kb: 1e3, mb: 1e6, gb: 1e9,
  kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3,
};

/** Bytes of a size (`64MiB`, `500KB`, `1048576`), or undefined when it is not one. */
export function parseByteSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(value);
  if (!match) return undefined;
  const unit = SIZE_UNITS[match[2]!.toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
