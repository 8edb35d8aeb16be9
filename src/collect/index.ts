/**
 * Every collector of a Flussonic server, by name. Config switches (`collectors:`), their defaults,
 * the docs and the validation of collector names all come from this one table; the poller creates
 * one instance per server from it.
 */
import { createClusterCollector } from './cluster.js';
import { createDvrsCollector } from './dvrs.js';
import { createServerCollector } from './server.js';
import { createSessionsCollector } from './sessions.js';
import { createStreamsCollector } from './streams.js';
import type { CollectorEntry } from './types.js';

export const COLLECTORS: readonly CollectorEntry[] = Object.freeze([
  { name: 'streams', defaultEnabled: true, create: createStreamsCollector },
  { name: 'sessions', defaultEnabled: true, create: () => createSessionsCollector() },
  { name: 'server', defaultEnabled: true, create: createServerCollector },
  { name: 'dvrs', defaultEnabled: false, create: () => createDvrsCollector() },
  { name: 'cluster', defaultEnabled: false, create: () => createClusterCollector() },
]);
