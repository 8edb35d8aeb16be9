#!/usr/bin/env node
/**
 * The flussonic-exporter command. Wiring only: arguments, config, logger, exporter, listen,
 * signals. Exit codes: 0 clean stop, 2 bad arguments or config, 1 runtime failure.
 */
// First: it sets V8's heap flags before anything else allocates (src/heap-flags.ts).
import './heap-flags.js';
import type { Logger } from 'pino';
import { applyOverrides, failureReport, listenAddresses, listenFailure, parseCli, USAGE, type CliCommand } from './cli.js';
import { loadConfig, type ExporterConfig } from './config/index.js';
import { createExporter } from './exporter.js';
import { startListeners, type Listeners } from './serve/listen.js';
import { FIXED_ROUTE_PATHS } from './serve/routes.js';
import { loadWebConfig } from './serve/web-config.js';
import { WebConfigSource } from './serve/web-config-source.js';
import type { ReloadOutcome } from './serve/route-types.js';
import { configReloader, reloadOnSighup, untilStopped } from './lifecycle.js';
import { createLogger, logDestination } from './logger.js';
import { readVersion, versionText } from './version.js';

async function main(argv: readonly string[]): Promise<number> {
  const command = parseCli(argv, process.env);
  switch (command.kind) {
    case 'help':
      return print(USAGE);
    case 'version':
      return print(versionText(readVersion()));
    case 'simulate':
      // Loaded only for this subcommand, like the demo: the exporter itself never imports the simulator.
      return (await import('./demo.js')).simulate(command.argv);
    case 'check': {
      const { servers, catena, discovery = [] } = loadConfig(command.configPath, process.env, { reservedPaths: FIXED_ROUTE_PATHS });
      if (command.webConfigFile !== undefined) loadWebConfig(command.webConfigFile);
      const sources = discovery.length > 0 ? `, ${discovery.length} discovery sources` : '';
      const web = command.webConfigFile !== undefined ? `; ${command.webConfigFile}: valid` : '';
      return print(`${command.configPath}: valid (${servers.length} servers, ${catena.length} catena${sources})${web}`);
    }
    case 'check-web': {
      const web = loadWebConfig(command.file);
      return print(`${command.file}: valid (tls: ${web.tls ? 'on' : 'off'}, basic auth users: ${web.users.size})`);
    }
    case 'run':
      return run(command);
  }
}

async function run(command: Extract<CliCommand, { kind: 'run' }>): Promise<number> {
  const { source, overrides, web } = command;
  // The simulator is loaded only here: without --demo no simulated data can ever be exported.
  const demo = source.kind === 'demo' ? await (await import('./demo.js')).startDemo(source.shape, source.full ?? false) : undefined;
  const load = (): ExporterConfig => applyOverrides(source.kind === 'file' ? loadConfig(source.path, process.env, { reservedPaths: FIXED_ROUTE_PATHS }) : demo!.config, overrides);
  let config: ExporterConfig;
  let logger: Logger;
  let webConfig: WebConfigSource;
  try {
    config = load();
    logger = createLogger(config.logLevel, logDestination(command.logFormat ?? 'json'));
    // A bad web config stops the start (exit 2); later, a bad one keeps the last good one.
    webConfig = new WebConfigSource(web.configFile, logger);
  } catch (error) {
    await demo?.close();
    throw error;
  }
  // POST /-/reload runs the reload SIGHUP runs; it is made once the exporter exists.
  let reload: (trigger: string) => ReloadOutcome = () => ({ ok: false, error: 'not started yet' });
  const exporter = createExporter({
    config,
    logger,
    version: readVersion(),
    guards: { webConfig: () => webConfig.current, maxRequests: web.limits.maxRequests },
    ...(web.healthWithoutAuth ? { healthWithoutAuth: true } : {}),
    lifecycle: { enabled: web.enableLifecycle === true, reload: () => reload('/-/reload') },
    ...(command.shard ? { shard: command.shard } : {}),
    ...(web.externalAddress !== undefined ? { externalAddress: web.externalAddress } : {}),
    demo: demo !== undefined,
    // workers: 0 polls here; otherwise this thread never loads the poll runtime.
    ...(config.workers === 0 ? { inProcessChannels: (await import('./threads/in-process.js')).inProcessChannels } : {}),
  });
  // Signals are handled from here on: one that arrives while binding the port still stops cleanly.
  let stopping = false;
  let listeners: Listeners | undefined;
  const stopped = untilStopped(async () => {
    stopping = true;
    webConfig.close();
    await exporter.stop();
    // Stop accepting and let running scrapes finish, then close the app (503 to latecomers).
    await Promise.all([listeners?.close(), exporter.app.close(), demo?.close()]);
  }, logger);
  webConfig.onReloadOutcome((ok) => exporter.webConfigReloaded(ok));
  reload = configReloader(exporter, source.kind === 'file' ? load : undefined, logger, (trigger) => webConfig.file === undefined || webConfig.reload(trigger));
  reloadOnSighup(reload);
  try {
    await exporter.app.ready();
    listeners = await startListeners({
      handler: exporter.app.routing,
      addresses: listenAddresses(config, overrides),
      limits: web.limits,
      web: webConfig,
      log: logger,
      onListenError: listenFailure,
      onConnectionDropped: (reason) => exporter.connectionDropped(reason),
    });
    // The demo's simulator posts its events to the address really bound (--web.listen-address may move it).
    demo?.connectEvents(listeners.addresses[0]!, listeners.tls);
  } catch (error) {
    await Promise.all([exporter.stop(), demo?.close()]);
    throw error;
  }
  webConfig.watch();
  if (demo) logger.warn({ simulator: demo.simulatorUrl }, 'DEMO MODE: the metrics come from an embedded simulator, not from a Flussonic server');
  for (const address of listeners.addresses) logger.info({ address, tls: listeners.tls, metricsPath: config.metricsPath }, 'listening');
  if (webConfig.file !== undefined) logger.info({ webConfigFile: webConfig.file, tls: listeners.tls, users: webConfig.current.users.size }, 'web config loaded');
  if (!stopping) exporter.start();
  await stopped;
  return 0;
}

function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (exitCode) => process.exit(exitCode),
  (error: unknown) => {
    const { exitCode, text } = failureReport(error);
    process.stderr.write(text);
    process.exit(exitCode);
  },
);
