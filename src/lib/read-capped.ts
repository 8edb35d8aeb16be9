/**
 * Reading the config file and the secret files with a size cap: without one a huge config would
 * take seconds and gigabytes to reject, and `password_file: /dev/zero` would never end. At most
 * cap + 1 bytes are read, whatever the file is (regular, device, FIFO).
 */
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The config file: far above real configs (1,000 servers take about 150 KB), low enough that the
 * worst shapes of YAML within it (200,000 keys, deep nesting) are rejected in seconds.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;
/** A secret file (password, bearer token, API key). */
export const MAX_SECRET_BYTES = 64 * 1024;

export type CappedRead = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string };

/** The file as UTF-8, or why not: `ENOENT`, or `larger than the 1MiB cap`. */
export function readFileCapped(path: string, capBytes: number): CappedRead {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return { ok: false, reason: errorCode(error) };
  }
  try {
    const buffer = Buffer.allocUnsafe(capBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > capBytes) return { ok: false, reason: `larger than the ${formatByteSize(capBytes)} cap` };
    return { ok: true, text: buffer.toString('utf8', 0, length) };
  } catch (error) {
    return { ok: false, reason: errorCode(error) };
  } finally {
    closeSync(fd);
  }
}

function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code ?? (error instanceof Error ? error.message : String(error));
}

/** A byte count for messages: `4MiB`, `64KiB`, or bytes when it is no whole number of KiB. */
export function formatByteSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)}MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024}KiB`;
  return `${bytes} bytes`;
}
