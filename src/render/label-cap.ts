/**
 * The cap on a label value's length (`max_label_value_bytes`, default 256 UTF-8 bytes). A stream
 * named with 10 MB of text would otherwise be written into every one of its series, every poll,
 * and make /metrics hundreds of MB (Prometheus with `label_value_length_limit` then fails the
 * whole scrape). A longer value is cut at a UTF-8 character boundary and ends in `~` and 8 hex
 * digits of a hash of the whole value, so two long values that share their first bytes stay two
 * series, and the same value gives the same series on every poll and in every replica.
 */
import { createHash } from 'node:crypto';

/** `~` and 8 hex digits. */
const SUFFIX_BYTES = 9;

/**
 * Whether `value` may be over `maxBytes`: the common path's only check. A UTF-16 code unit is at
 * most 3 UTF-8 bytes, so a value of up to maxBytes / 3 units never is.
 */
export function mayExceed(value: string, maxBytes: number): boolean {
  return value.length * 3 > maxBytes && Buffer.byteLength(value, 'utf8') > maxBytes;
}

/** `value` cut to at most `maxBytes` UTF-8 bytes with its hash suffix (call when mayExceed()). */
export function truncateLabelValue(value: string, maxBytes: number): string {
  const bytes = Buffer.from(value, 'utf8');
  let cut = Math.max(0, maxBytes - SUFFIX_BYTES);
  // Back off to the start of a character (continuation bytes are 10xxxxxx).
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
  // Native SHA-256: a 10 MB value hashes in milliseconds.
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 8);
  return `${bytes.subarray(0, cut).toString('utf8')}~${hash}`;
}
