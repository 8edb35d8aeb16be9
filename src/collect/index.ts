/**
 * Every collector of a Flussonic server, by name; the poller creates one instance per server from
 * it. Whether each runs by default is the config's (src/config/switches.ts).
 */
import { createClusterCollector } from './cluster.js';
import { createDvrsCollector } from './dvrs.js';
import { createServerCollector } from './server.js';
import { createSessionsCollector } from './sessions.js';
import { createStreamsCollector } from './streams.js';
import type { CollectorEntry } from './types.js';
import { COLLECTOR_DEFAULTS } from '../config/switches.js';

export const COLLECTORS: readonly CollectorEntry[] = Object.freeze([
  { name: 'streams', defaultEnabled: COLLECTOR_DEFAULTS.streams, create: createStreamsCollector },
  { name: 'sessions', defaultEnabled: COLLECTOR_DEFAULTS.sessions, create: () => createSessionsCollector() },
  { name: 'server', defaultEnabled: COLLECTOR_DEFAULTS.server, create: createServerCollector },
  { name: 'dvrs', defaultEnabled: COLLECTOR_DEFAULTS.dvrs, create: () => createDvrsCollector() },
  { name: 'cluster', defaultEnabled: COLLECTOR_DEFAULTS.cluster, create: () => createClusterCollector() },
]);
