/**
 * The sample lines of one family as UTF-8, written straight into byte chunks: no per-line string,
 * no joined text. The blocks render() hands out are deflated where they were written
 * (prepareTarget); only the deflated form leaves the thread.
 */

/** First chunk of a family: most families of a small target hold a few lines. */
const FIRST_CHUNK = 1024;
/** Chunks double up to this; a full chunk is handed out as it is, without a copy. */
const MAX_CHUNK = 256 * 1024;

export class FamilyBytes {
  private readonly full: Buffer[] = [];
  private chunk: Buffer = Buffer.allocUnsafe(FIRST_CHUNK);
  private pos = 0;

  /** Makes room for `bytes` more bytes in the current chunk. */
  reserve(bytes: number): void {
    if (this.pos + bytes <= this.chunk.length) return;
    if (this.pos > 0) this.full.push(this.chunk.subarray(0, this.pos));
    const size = Math.max(bytes, Math.min(MAX_CHUNK, this.chunk.length * 2));
    this.chunk = Buffer.allocUnsafe(size);
    this.pos = 0;
  }

  bytes(b: Uint8Array): void {
    const n = b.length;
    this.reserve(n);
    const c = this.chunk;
    let p = this.pos;
    // Names and label blocks are a few dozen bytes: a loop beats TypedArray.set's call overhead.
    if (n <= 64) for (let i = 0; i < n; i++) c[p++] = b[i]!;
    else {
      c.set(b, p);
      p += n;
    }
    this.pos = p;
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

  /** A sample value as Prometheus parses it: integers digit by digit, the rest via formatValue. */
  value(v: number): void {
    if (Number.isInteger(v) && v > -1e15 && v < 1e15) {
      this.reserve(17);
      let n = v;
      if (n < 0) {
        this.chunk[this.pos++] = 0x2d; // '-'
        n = -n;
      }
      if (n === 0) {
        this.chunk[this.pos++] = 0x30;
        return;
      }
      let digits = 0;
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

  /** The lines written, as blocks (views of the chunks, not copies). The writer is done with them after this. */
  blocks(): Buffer[] {
    const out = this.full.slice();
    if (this.pos > 0) out.push(this.chunk.subarray(0, this.pos));
    return out;
  }

  /** Lets the chunks go (a shed family). */
  clear(): void {
    this.full.length = 0;
    this.chunk = Buffer.allocUnsafe(FIRST_CHUNK);
    this.pos = 0;
  }
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
