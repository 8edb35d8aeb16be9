/** The exporter's version: the one in package.json, read from beside src/ or dist/. */
import { readFileSync } from 'node:fs';

/** The product token of every request's User-Agent (`flussonic-exporter/<version>`). */
export const USER_AGENT_PRODUCT = 'flussonic-exporter';

/**
 * The git commit the build was made from: `npm run build` writes dist/build-info.json
 * (scripts/write-build-info.mjs); `unknown` when it is absent (running from src/, or built
 * outside a git checkout).
 */
export function readRevision(): string {
  try {
    const info: unknown = JSON.parse(readFileSync(new URL('./build-info.json', import.meta.url), 'utf8'));
    const revision = info !== null && typeof info === 'object' && 'revision' in info ? info.revision : undefined;
    return typeof revision === 'string' && /^[0-9a-f]{7,40}$|^unknown$/.test(revision) ? revision : 'unknown';
  } catch {
    return 'unknown';
  }
}

export function readVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const version = pkg !== null && typeof pkg === 'object' && 'version' in pkg ? pkg.version : undefined;
  return typeof version === 'string' ? version : '0.0.0-unknown';
}
