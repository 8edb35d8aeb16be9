/**
 * The signals of the running daemon: SIGHUP reloads the config (a bad one is logged and the old
 * one keeps running; POST /-/reload runs the same reload), SIGTERM/SIGINT stop everything and end
 * within a deadline.
 */
import type { Logger } from 'pino';
import { isConfigError } from './lib/errors.js';
import type { Exporter } from './exporter.js';
import type { ExporterConfig } from './config/index.js';
import type { ReloadOutcome } from './serve/route-types.js';

/** SIGTERM to exit stays below 5 s even when stopping hangs. */
const STOP_DEADLINE_MS = 4500;

/**
 * The reload SIGHUP and POST /-/reload run: the web config (`reloadWeb`, which logs its own
 * outcome; false when the new one is bad), then the config (`load`; undefined: nothing to reload,
 * as in the demo). A bad one is logged and the previous one keeps running.
 */
export function configReloader(exporter: Exporter, load: (() => ExporterConfig) | undefined, log: Logger, reloadWeb?: (trigger: string) => boolean): (trigger: string) => ReloadOutcome {
  return (trigger) => {
    const webOk = reloadWeb?.(trigger) ?? true;
    const webFailure = 'the web config is invalid; the previous one stays in force (see the log)';
    if (!load) {
      log.info({ trigger }, 'there is no config file to reload');
      return webOk ? { ok: true } : { ok: false, error: webFailure };
    }
    try {
      exporter.reload(load());
      exporter.configReloaded(true);
      log.info({ trigger }, 'configuration reloaded');
    } catch (error) {
      exporter.configReloaded(false);
      // ConfigError problems carry paths and messages, never secret values.
      const problems = isConfigError(error) ? error.problems : [{ path: '', message: error instanceof Error ? error.message : String(error) }];
      log.error({ problems, trigger }, 'the new configuration is invalid; the previous one keeps running');
      const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
      return { ok: false, error: `the new configuration is invalid (${count}, see the log); the previous one keeps running` };
    }
    return webOk ? { ok: true } : { ok: false, error: webFailure };
  };
}

/** SIGHUP runs `reload`. */
export function reloadOnSighup(reload: (trigger: string) => ReloadOutcome): void {
  process.on('SIGHUP', () => reload('SIGHUP'));
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
