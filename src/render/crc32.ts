/**
 * CRC-32 (the gzip one) of a concatenation from the CRCs of its pieces, without reading the bytes
 * again: crc(A ++ B) = crc(A) x x^(8 |B|) mod P  xor  crc(B). This is zlib's crc32_combine
 * (multmodp / x2nmodp, in the bit-reflected representation zlib uses); Node exposes zlib.crc32
 * but not the combine. A piece's factor x^(8 |B|) mod P is computed once where the piece is made
 * (shiftOf), so joining thousands of pieces per response costs one multiplication each.
 */

/** The CRC-32 polynomial, reflected. */
const POLY = 0xedb88320;

/** a x b modulo P (both reflected: bit 31 is x^0). */
export function multmodp(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** X2N[k] = x^(2^k) mod P. */
const X2N: number[] = (() => {
  const table: number[] = [];
  let p = 0x40000000; // x^1
  table.push(p);
  for (let k = 1; k < 32; k++) table.push((p = multmodp(p, p)));
  return table;
})();

/** x^(8 bytes) mod P: the factor that moves a CRC past `bytes` more bytes. */
export function shiftOf(bytes: number): number {
  let p = 0x80000000; // x^0
  let k = 3; // 8 = 2^3
  for (let n = bytes; n > 0; n = Math.floor(n / 2), k++) {
    if (n % 2 === 1) p = multmodp(X2N[k & 31]!, p);
  }
  return p;
}

/** The CRC of A ++ B from crc(A), crc(B) and B's factor shiftOf(|B|). */
export function combineCrc(crcA: number, crcB: number, shiftB: number): number {
  return (multmodp(shiftB, crcA) ^ crcB) >>> 0;
}
