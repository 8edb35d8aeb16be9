/**
 * A growable byte buffer that sample lines are written into as UTF-8: no per-line string, no
 * joined text. SeriesWriter keeps its samples as label blocks and numbers until the end of a poll,
 * then writes one family at a time into one such buffer, reused from family to family and poll to
 * poll, and the text is deflated from there (src/serve/exposition.ts), 256 KiB at a time
 * (spillTo()): neither a target's text nor a large family's ever exists whole.
 */

const FIRST_SIZE = 1024;

export class FamilyBytes {
  private chunk: Buffer = Buffer.allocUnsafe(FIRST_SIZE);
  private pos = 0;
  private spillAt = Number.POSITIVE_INFINITY;
  private sink: ((bytes: Uint8Array) => void) | undefined;

  /**
   * From now on, once a line ends (endLine()) with at least `atBytes` bytes written, they are
   * handed to `sink` (a view valid only during the call) and the buffer starts again: a writer of
   * any size then needs a buffer of about `atBytes`. spill() hands over what is left.
   */
  spillTo(sink: (bytes: Uint8Array) => void, atBytes: number): void {
    this.sink = sink;
    this.spillAt = atBytes;
  }

  /** Marks the end of a line: the bytes so far may be spilled (see spillTo()). */
  endLine(): void {
    if (this.pos >= this.spillAt) this.spill();
  }

  /** Hands what was written since the last spill to the sink, if any, and starts again. */
  spill(): void {
    if (this.pos === 0 || this.sink === undefined) return;
    this.sink(this.chunk.subarray(0, this.pos));
    this.pos = 0;
  }

  /** The bytes written since the last reset() or spill, a view valid until the next write or reset. */
  view(): Uint8Array {
    return this.chunk.subarray(0, this.pos);
  }

  get length(): number {
    return this.pos;
  }

  /** Starts again at the beginning, keeping the memory. */
  reset(): void {
    this.pos = 0;
  }

  /** Makes room for `bytes` more bytes (growing by copying into a buffer twice as large). */
  reserve(bytes: number): void {
    if (this.pos + bytes <= this.chunk.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.pos + bytes, this.chunk.length * 2));
    this.chunk.copy(grown, 0, 0, this.pos);
    this.chunk = grown;
  }

  /** The first `n` bytes of `b` (all of them by default). */
  bytes(b: Uint8Array, n: number = b.length): void {
    this.reserve(n);
    this.pos = copyInto(this.chunk, this.pos, b, n);
  }

  /** ASCII only (family names, numbers, `le` values). */
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const c = this.chunk;
    let p = this.pos;
    for (let i = 0; i < n; i++) c[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Any text: ASCII copied code by code (most label values), the rest encoded by Buffer.write. */
  utf8(s: string): void {
    const n = s.length;
    this.reserve(n * 3);
    const c = this.chunk;
    let p = this.pos;
    for (let i = 0; i < n; i++) {
      const code = s.charCodeAt(i);
      if (code > 0x7f) {
        this.pos = p + c.write(i === 0 ? s : s.slice(i), p, 'utf8');
        return;
      }
      c[p++] = code;
    }
    this.pos = p;
  }

  byte(b: number): void {
    this.reserve(1);
    this.chunk[this.pos++] = b;
  }

  /**
   * One sample line, `<name><block> <value>\n`, with one check for room: the name, the label
   * block (without its closing `}` when `suffix` closes it instead), the value. The hot loop of a
   * poll's rendering (about 320,000 lines at 10,000 streams / 100,000 sessions).
   */
  sampleLine(name: Uint8Array, block: Uint8Array, suffix: Uint8Array | undefined, v: number): void {
    const blockBytes = suffix === undefined ? block.length : block.length - 1;
    this.reserve(name.length + blockBytes + (suffix === undefined ? 0 : suffix.length) + LINE_SLACK);
    const c = this.chunk;
    let p = copyInto(c, this.pos, name, name.length);
    p = copyInto(c, p, block, blockBytes);
    if (suffix !== undefined) p = copyInto(c, p, suffix, suffix.length);
    c[p++] = 0x20;
    if (isSmallInt(v)) {
      p = writeSmallInt(c, p, v);
      c[p++] = 0x0a;
      this.pos = p;
      return;
    }
    this.pos = p;
    this.value(v); // reserves for itself (within LINE_SLACK, so the buffer stays, but it may not)
    this.byte(0x0a);
  }

  /**
   * A sample value as Prometheus parses it: integers digit by digit (0..2^31-1 by int32 arithmetic,
   * the rest up to 10^15 in doubles), other values via formatValue.
   */
  value(v: number): void {
    if (isSmallInt(v)) {
      this.reserve(10);
      this.pos = writeSmallInt(this.chunk, this.pos, v);
      return;
    }
    if (Number.isInteger(v) && v > -1e15 && v < 1e15) {
      this.reserve(17);
      let n = v;
      if (n < 0) {
        this.chunk[this.pos++] = 0x2d; // '-'
        n = -n;
      }
      let digits = 0; // n >= 1 here: zero was a small integer
      for (let t = n; t >= 1; t = Math.floor(t / 10)) digits++;
      let at = this.pos + digits;
      this.pos = at;
      while (n >= 1) {
        const q = Math.floor(n / 10);
        this.chunk[--at] = 0x30 + (n - q * 10);
        n = q;
      }
      return;
    }
    this.ascii(formatValue(v));
  }
}

/** Room a sample line needs beyond its name and labels: a space, the longest value (`formatValue`), a newline. */
const LINE_SLACK = 32;

/**
 * TypedArray.prototype.set, called through the function itself: on Node 20, `c.set(b, p)` missed
 * its inline cache on every call (a generic LoadIC of `set`, counted under callgrind).
 */
const SET = Uint8Array.prototype.set;

/**
 * Copies the first `n` bytes of `b` to `c` at `p`; returns the offset after them. When `b` is
 * longer and fits, it is copied whole: what lies past `p + n` is free room the caller writes next
 * (a label block's `}` that a suffix replaces).
 */
function copyInto(c: Uint8Array, p: number, b: Uint8Array, n: number): number {
  // Short copies (suffixes, short names) by a loop, about 25 instructions a byte; longer ones
  // (names, label blocks: 30-60 bytes) by set() (18,000 lines rendered in 8-10 ms with a loop up
  // to 64 bytes, 4-6 ms with set() from 17).
  if (n <= 16 || p + b.length > c.length) {
    for (let i = 0; i < n; i++) c[p + i] = b[i]!;
  } else SET.call(c, b, p);
  return p + n;
}

/** Whether `v` is an integer 0..2^31-1 (-0 included, written as 0), for writeSmallInt(). */
function isSmallInt(v: number): boolean {
  return v >= 0 && v <= 0x7fffffff && (v | 0) === v;
}

/** The decimal digits of an integer 0..2^31-1 at `p`, by 32-bit arithmetic; returns the offset after them. */
function writeSmallInt(c: Uint8Array, p: number, v: number): number {
  if (v < 10) {
    c[p] = 0x30 + v;
    return p + 1;
  }
  let digits = 1;
  for (let t = v; t >= 10; t = (t / 10) | 0) digits++;
  let at = p + digits;
  const end = at;
  let n = v;
  while (n >= 10) {
    const q = (n / 10) | 0;
    c[--at] = 0x30 + (n - q * 10);
    n = q;
  }
  c[--at] = 0x30 + n;
  return end;
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
