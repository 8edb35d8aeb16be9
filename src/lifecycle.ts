/**
 * The signals of the running daemon: SIGHUP reloads the config (a bad one is logged and the old
 * one keeps running), SIGTERM/SIGINT stop everything and end within a deadline.
 */
import type { Logger } from 'pino';
import { isConfigError } from './lib/errors.js';
import type { Exporter } from './exporter.js';
import type { ExporterConfig } from './config/index.js';

/** SIGTERM to exit stays below 5 s even when stopping hangs. */
const STOP_DEADLINE_MS = 4500;

/**
 * `load` re-reads the config (undefined: nothing to reload, as in the demo); `reloadWeb` re-reads
 * the web config (it logs its own outcome).
 */
export function reloadOnSighup(exporter: Exporter, load: (() => ExporterConfig) | undefined, log: Logger, reloadWeb?: () => void): void {
  process.on('SIGHUP', () => {
    reloadWeb?.();
    if (!load) return log.info('SIGHUP: there is no config file to reload');
    try {
      exporter.reload(load());
      exporter.configReloaded(true);
      log.info('configuration reloaded');
    } catch (error) {
      exporter.configReloaded(false);
      // ConfigError problems carry paths and messages, never secret values.
      const problems = isConfigError(error) ? error.problems : [{ path: '', message: error instanceof Error ? error.message : String(error) }];
      log.error({ problems }, 'the new configuration is invalid; the previous one keeps running');
    }
  });
}

/** Resolves once SIGTERM or SIGINT came and `stopAll` finished, or the deadline passed. */
export function untilStopped(stopAll: () => Promise<unknown>, log: Logger): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      // A second signal while stopping is ignored: the deadline ends it anyway.
      process.on('SIGTERM', () => undefined);
      process.on('SIGINT', () => undefined);
      log.info({ signal }, 'stopping');
      setTimeout(() => {
        log.warn(`stopping took over ${STOP_DEADLINE_MS} ms; exiting now`);
        resolve();
      }, STOP_DEADLINE_MS).unref();
      stopAll()
        .catch((error: unknown) => log.error({ err: error }, 'error while stopping'))
        .finally(resolve);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
