/**
 * The text of a body that came in chunks (src/upstream/body-text.ts): decoded as the whole, one
 * body after another through the reused buffer.
 */
import { describe, expect, it } from 'vitest';
import { bodyText } from '../../src/upstream/body-text.js';

/** `text` as UTF-8, cut into chunks of `size` bytes (cuts may fall inside a character). */
function chunked(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

const total = (chunks: readonly Buffer[]) => chunks.reduce((n, c) => n + c.length, 0);

describe('the text of a chunked body', () => {
  it('decodes characters cut between two chunks', () => {
    const text = JSON.stringify({ streams: Array.from({ length: 200 }, (_, i) => ({ name: `камера-${i}/вход`, title: 'Ωμέγα 📺' })) });
    const chunks = chunked(text, 7);
    expect(chunks.length).toBeGreaterThan(100);
    expect(bodyText(chunks, total(chunks))).toBe(text);
  });

  it('gives each body its own text when a shorter one follows a longer one', () => {
    const long = `{"a":"${'x'.repeat(300_000)}"}`;
    const short = '{"b":"ü"}';
    expect(bodyText(chunked(long, 65_536), long.length)).toBe(long);
    const chunks = chunked(short, 4);
    expect(bodyText(chunks, total(chunks))).toBe(short);
  });

  it('decodes a body larger than the reused buffer may grow, and a body of one chunk', () => {
    const big = `["${'é'.repeat(5_000_000)}"]`;
    const chunks = chunked(big, 1 << 20);
    expect(total(chunks)).toBeGreaterThan(8 * 1024 * 1024);
    expect(bodyText(chunks, total(chunks))).toBe(big);
    expect(bodyText([Buffer.from('{"one":1}')], 9)).toBe('{"one":1}');
  });
});
