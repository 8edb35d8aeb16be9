/**
 * Stable hashes of names, the same in every process, version and platform: where a target is
 * sharded (src/fleet/shard.ts), which worker thread polls it (src/threads/pool.ts), and where in
 * its interval it is polled (src/poll/schedule.ts).
 */

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

/** FNV-1a 64 of the UTF-8 bytes of `text`, as an unsigned 64-bit BigInt. */
export function fnv1a64(text: string): bigint {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * FNV_PRIME) & MASK_64;
  }
  return hash;
}

/** MurmurHash3's fmix64: every input bit affects every output bit. */
export function fmix64(key: bigint): bigint {
  let k = key;
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & MASK_64;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & MASK_64;
  k ^= k >> 33n;
  return k;
}

/** A fraction in [0, 1) from a name, evenly spread over names. */
export function unitOf(text: string): number {
  return Number(fmix64(fnv1a64(text)) >> 11n) / 2 ** 53;
}
