/**
 * Every collector of a Flussonic server, by name; the poller creates one instance per server from
 * it. Whether each is on by default is COLLECTOR_DEFAULT_ENABLED (src/families/switches.ts), the
 * plain data the config's `collectors:` defaults read too.
 */
import { createClusterCollector } from './cluster.js';
import { createDvrsCollector } from './dvrs.js';
import { createServerCollector } from './server.js';
import { createSessionsCollector } from './sessions.js';
import { createStreamsCollector } from './streams.js';
import type { CollectorEntry } from './types.js';
import { COLLECTOR_DEFAULT_ENABLED as ON } from '../families/switches.js';

export const COLLECTORS: readonly CollectorEntry[] = Object.freeze([
  { name: 'streams', defaultEnabled: ON.streams, create: createStreamsCollector },
  { name: 'sessions', defaultEnabled: ON.sessions, create: () => createSessionsCollector() },
  { name: 'server', defaultEnabled: ON.server, create: createServerCollector },
  { name: 'dvrs', defaultEnabled: ON.dvrs, create: () => createDvrsCollector() },
  { name: 'cluster', defaultEnabled: ON.cluster, create: () => createClusterCollector() },
]);
