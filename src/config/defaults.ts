/** The defaults other modules need as values, read off the schema (which has them all). */
import { configSchema, POLL_INTERVAL, type SchemaContext } from './schema.js';

/** A context for reading the schema itself (no file is validated with it). */
export const SCHEMA_ONLY: SchemaContext = { baseDir: '/', reservedPaths: [], pollIntervalMs: POLL_INTERVAL.parse(undefined), templateNames: [] };

const probe = configSchema(SCHEMA_ONLY).parse({ servers: [{ name: 'defaults', url: 'http://localhost' }] });
export const DEFAULTS = Object.freeze({
  listenPort: probe.listenAddress.port,
  metricsPath: probe.metricsPath,
  workers: probe.workers,
  server: Object.freeze({ collectors: probe.servers[0]!.collectors, families: probe.servers[0]!.families }),
});
