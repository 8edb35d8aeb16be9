/**
 * Every collector of a Flussonic server, by name. Config switches (`collectors:`), their defaults,
 * the docs and the validation of collector names all come from this one table; the poller creates
 * one instance per server from it.
 */
import { createServerCollector } from './server.js';
import { createStreamsCollector } from './streams.js';
import type { CollectorEntry } from './types.js';

export const COLLECTORS: readonly CollectorEntry[] = Object.freeze([
  { name: 'streams', defaultEnabled: true, create: createStreamsCollector },
  // sessions (defaultEnabled: true) goes here: added by the `sessions` branch.
  { name: 'server', defaultEnabled: true, create: createServerCollector },
  // dvrs (defaultEnabled: false) goes here: added by the `sessions` branch.
]);
