import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * ../shared beside the clone (API descriptions, OpenAPI files, samples). A fresh clone does not
 * have it: tests that need it skip with a printed reason (see sharedOrSkip).
 * FLUSSONIC_SHARED_DIR overrides the location.
 */
export const SHARED_DIR = resolve(process.env.FLUSSONIC_SHARED_DIR ?? join(REPO_ROOT, '..', 'shared'));

/** Path of a file under ../shared, or undefined (with the reason printed once) where it is absent. */
export function sharedFile(relative: string): string | undefined {
  const path = join(SHARED_DIR, relative);
  if (existsSync(path)) return path;
  const reason = `skipping: ${path} is absent (tests that read ../shared need it beside the clone)`;
  if (!printed.has(reason)) {
    printed.add(reason);
    console.warn(reason);
  }
  return undefined;
}
const printed = new Set<string>();

export const SAMPLES_2021 = 'flussonic-api/samples/openapi_handler-2021-runtime';
export const SAMPLES_2025 = 'flussonic-api/samples/spec-examples-go-flussonic-2025-11';
export const OPENAPI_23_05 = 'flussonic-api/flussonic-public-23.05-637.json';
