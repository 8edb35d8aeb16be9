import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isConfigError, type ConfigError } from '../../src/lib/errors.js';

/** A temporary directory for config and secret files, removed by cleanup(). */
export class ConfigDir {
  readonly path = mkdtempSync(join(tmpdir(), 'fe-config-'));

  write(name: string, content: string): string {
    const file = join(this.path, name);
    writeFileSync(file, content);
    return file;
  }

  cleanup(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** Runs `fn`, expecting a ConfigError, and returns it. */
export function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (isConfigError(error)) return error;
    throw error;
  }
  throw new Error('expected a ConfigError, but the config was accepted');
}
