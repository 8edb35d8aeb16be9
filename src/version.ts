/** The exporter's version: the one in package.json, read from beside src/ or dist/. */
import { readFileSync } from 'node:fs';

export function readVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const version = pkg !== null && typeof pkg === 'object' && 'version' in pkg ? pkg.version : undefined;
  return typeof version === 'string' ? version : '0.0.0-unknown';
}
