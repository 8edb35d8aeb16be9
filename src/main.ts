#!/usr/bin/env node
/**
 * The flussonic-exporter command. Wiring only: arguments, config, logger, exporter, listen,
 * signals. Exit codes: 0 clean stop, 2 bad arguments or config, 1 runtime failure.
 */
import { applyOverrides, failureReport, listenFailure, parseCli, USAGE, type CliCommand } from './cli.js';
import { loadConfig, type ExporterConfig } from './config/index.js';
import { createExporter } from './exporter.js';
import { reloadOnSighup, untilStopped } from './lifecycle.js';
import { createLogger } from './logger.js';
import { readVersion } from './version.js';

async function main(argv: readonly string[]): Promise<number> {
  const command = parseCli(argv, process.env);
  switch (command.kind) {
    case 'help':
      return print(USAGE);
    case 'version':
      return print(readVersion());
    case 'simulate':
      // Loaded only for this subcommand, like the demo: the exporter itself never imports the simulator.
      return (await import('./simulator/cli.js')).runSimulate([...command.argv]);
    case 'check': {
      const { servers, catena } = loadConfig(command.configPath);
      return print(`${command.configPath}: valid (${servers.length} servers, ${catena.length} catena)`);
    }
    case 'run':
      return run(command);
  }
}

async function run(command: Extract<CliCommand, { kind: 'run' }>): Promise<number> {
  const { source, overrides } = command;
  // The simulator is loaded only here: without --demo no simulated data can ever be exported.
  const demo = source.kind === 'demo' ? await (await import('./demo.js')).startDemo(source.shape) : undefined;
  const load = (): ExporterConfig => applyOverrides(source.kind === 'file' ? loadConfig(source.path) : demo!.config, overrides);
  const config = load();
  const logger = createLogger(config.logLevel);
  const exporter = createExporter({ config, logger, version: readVersion() });
  // Signals are handled from here on: one that arrives while binding the port still stops cleanly.
  let stopping = false;
  const stopped = untilStopped(async () => {
    stopping = true;
    await exporter.stop();
    await Promise.all([exporter.app.close(), demo?.close()]);
  }, logger);
  reloadOnSighup(exporter, source.kind === 'file' ? load : undefined, logger);
  try {
    await exporter.app.listen(config.listenAddress);
  } catch (error) {
    await Promise.all([exporter.stop(), demo?.close()]);
    throw listenFailure(config.listenAddress, error);
  }
  if (demo) logger.warn({ simulator: demo.simulatorUrl }, 'DEMO MODE: the metrics come from an embedded simulator, not from a Flussonic server');
  logger.info({ address: exporter.app.server.address(), metricsPath: config.metricsPath }, 'listening');
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
