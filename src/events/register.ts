/**
 * `events.register: true`: at start, PUT <api_prefix>/event_sinks/<sink_name> on each configured
 * server with its credentials, pointing the sink at this exporter (`events.public_url`) with the
 * server's secret as URL userinfo and the `only` filter of the kinds the exporter counts. Off by
 * default: the sink is Flussonic's config, and docs/events.md gives the snippet to set by hand.
 * One log line per server; neither the secret nor the credentials are ever logged.
 */
import type { Logger } from 'pino';
import type { EventsConfig, ServerConfig } from '../config/types.js';
import { SINK_ONLY } from './kinds.js';

const TIMEOUT_MS = 10_000;

/** The sink URL Flussonic is given for `server`: public_url/events/<name>, the secret as userinfo. */
export function sinkUrl(publicUrl: string, server: string, secret: string): string {
  const url = new URL(`${publicUrl.replace(/\/+$/, '')}/events/${encodeURIComponent(server)}`);
  url.username = 'flussonic';
  url.password = secret;
  return url.toString();
}

/** The body of the PUT: the sink as Flussonic's API takes it. */
export function sinkBody(publicUrl: string, server: string, secret: string): { url: string; only: readonly { event: readonly string[] }[] } {
  return { url: sinkUrl(publicUrl, server, secret), only: [{ event: SINK_ONLY }] };
}

/** Registers the sink on every server that has an events secret; resolves when all answered. */
export async function registerSinks(config: EventsConfig, servers: readonly ServerConfig[], log: Logger, fetchImpl: typeof fetch = fetch): Promise<void> {
  const publicUrl = config.publicUrl;
  if (!config.register || publicUrl === undefined) return;
  await Promise.all(
    servers.map(async (server) => {
      if (server.eventsSecret === undefined) {
        log.warn({ server: server.name }, 'event sink not registered: the server has no events_secret');
        return;
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const c = server.credentials;
      if (c.kind === 'basic') headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
      else if (c.kind === 'bearer') headers.authorization = `Bearer ${c.token}`;
      const target = `${server.url}${server.apiPrefix}/event_sinks/${encodeURIComponent(config.sinkName)}`;
      try {
        const res = await fetchImpl(target, { method: 'PUT', headers, body: JSON.stringify(sinkBody(publicUrl, server.name, server.eventsSecret)), signal: AbortSignal.timeout(TIMEOUT_MS) });
        await res.body?.cancel();
        if (res.ok) log.info({ server: server.name, sink: config.sinkName }, 'event sink registered');
        else log.warn({ server: server.name, sink: config.sinkName, status: res.status }, `event sink not registered: the server answered ${res.status} (events.register needs credentials that may edit the config)`);
      } catch (err) {
        log.warn({ server: server.name, sink: config.sinkName, reason: err instanceof Error ? err.name : 'error' }, 'event sink not registered: the server could not be reached');
      }
    }),
  );
}
