/**
 * vitest global setup: compiles src/ to dist/ when a source is newer. Worker threads run the
 * compiled worker (a thread cannot load .ts), so a test run from the sources polls with the same
 * code it tests, also when one test file is run alone without `npm test`'s build.
 */
import { ensureBuilt } from '../cli/exporter-process.js';

export default function setup(): void {
  ensureBuilt();
}
