/**
 * The text of a response body that came in chunks. The chunks are copied into one buffer per
 * thread, kept and reused from body to body, and decoded from there, so the JSON text is the one
 * large allocation a body makes. A buffer of its own per body (Buffer.concat) is, above malloc's
 * mmap threshold (128 KiB in the image and the unit: MALLOC_MMAP_THRESHOLD_), a fresh mapping
 * each time: its pages are faulted in while the chunks are copied and unmapped when it is
 * collected.
 *
 * Decoding is synchronous, so one buffer serves every target of the thread. It grows to the
 * largest body up to REUSED_MAX_BYTES (a walk's pages are kept near 1.5 MB of JSON:
 * src/upstream/page-size.ts); a larger body is joined in a buffer of its own.
 */
const REUSED_MAX_BYTES = 8 * 1024 * 1024;
/** Room is added in steps of this much, so that pages a little larger than the last do not each grow it. */
const GROWTH_STEP = 256 * 1024;

let reused: Buffer | undefined;

export function bodyText(chunks: readonly Buffer[], bytes: number): string {
  if (chunks.length === 1) return chunks[0]!.toString('utf8');
  if (bytes > REUSED_MAX_BYTES) return Buffer.concat(chunks, bytes).toString('utf8');
  if (reused === undefined || reused.length < bytes) reused = Buffer.allocUnsafeSlow(Math.min(REUSED_MAX_BYTES, Math.ceil(bytes / GROWTH_STEP) * GROWTH_STEP));
  const into = reused;
  let offset = 0;
  for (const chunk of chunks) {
    into.set(chunk, offset);
    offset += chunk.length;
  }
  return into.toString('utf8', 0, offset);
}
