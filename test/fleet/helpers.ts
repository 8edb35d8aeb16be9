/** Building fleet configs and in-process exporters for the fleet tests. */
import type { DiscoveryLimits, DiscoverySource, ExporterConfig, ServerConfig, ServerSettings } from '../../src/config/types.js';
import { createExporter, type Exporter } from '../../src/exporter.js';
import type { ShardSpec } from '../../src/fleet/shard.js';
import { captureLogger, exporterConfig, serverConfig, type CapturedLog } from '../helpers/runtime.js';

/** A template: a server's settings without name and url. */
export function template(overrides: Partial<ServerConfig> = {}): ServerSettings {
  const { name: _name, url: _url, ...settings } = serverConfig('x', 'http://127.0.0.1:1', overrides);
  return settings;
}

/** Discovery finds loopback simulators here, so loopback is allowed (discovery.allow_loopback); `limits` may override it. */
export function fleetConfig(servers: readonly ServerConfig[], templates: Record<string, ServerSettings>, discovery: readonly DiscoverySource[], limits: DiscoveryLimits = {}): ExporterConfig {
  return exporterConfig(servers, { templates: new Map(Object.entries(templates)), discovery, discoveryLimits: { allowLoopback: true, ...limits } });
}

export interface Harness {
  readonly exporter: Exporter;
  readonly log: CapturedLog;
  get(url: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }>;
}

const running: Exporter[] = [];

/** The address /sd names unless a test gives another (`null`: none, the connection's local address). */
export const EXTERNAL_ADDRESS = 'exporter.test:9228';

export function startExporter(config: ExporterConfig, shard?: ShardSpec, externalAddress: string | null = EXTERNAL_ADDRESS): Harness {
  const log = captureLogger();
  const exporter = createExporter({ config, logger: log.logger, version: 'test', ...(shard ? { shard } : {}), ...(externalAddress !== null ? { externalAddress } : {}) });
  running.push(exporter);
  return {
    exporter,
    log,
    async get(url) {
      const r = await exporter.app.inject({ method: 'GET', url, headers: { host: 'exporter.test:9228' } });
      return { status: r.statusCode, body: r.body, headers: r.headers };
    },
  };
}

export async function stopExporters(): Promise<void> {
  await Promise.all(running.splice(0).map((e) => e.stop()));
}
