/**
 * Discovery source `cluster_peers`: GET /cluster/peers of each seed (API v3, a cursor walk like
 * every collection), one server per peer: name = the peer's `hostname` (globally unique in a
 * Flussonic cluster, stable across restarts), URL = its `api_url`.
 *
 * A peer entry also carries `cluster_key` (the cluster's shared secret), `stats.license_txt` and
 * more. The walk asks only for `hostname` and `api_url` (`select=`), and nothing else of an entry
 * is read, kept, logged or put into an error: a peer that cannot be used is reported by its
 * position and hostname only.
 */
import type { Logger } from 'pino';
import type { ClusterPeersSource, ServerSettings } from '../config/types.js';
import type { ApiStats } from '../flussonic/api.js';
import { baseUrl, DiscoveryError, validName, type DiscoveredServer } from './discovery-types.js';

export interface ClusterPeersDeps {
  readonly log: Logger;
  readonly userAgent?: string;
}

/** The discovery requests are not a target's: they are counted by the discovery self-metrics. */
const UNCOUNTED: ApiStats = { request: () => undefined, error: () => undefined, responseBytes: () => undefined };

/**
 * The peers of every seed, merged by hostname. Any seed failing fails the refresh: a partial view
 * would withdraw the peers only the failed seed knows, and the last good list is safer.
 */
export async function readClusterPeers(source: ClusterPeersSource, template: ServerSettings, deps: ClusterPeersDeps, signal: AbortSignal): Promise<DiscoveredServer[]> {
  // Loaded here, not with the module: this runs on the serving thread, which otherwise loads the
  // HTTP client only with `workers: 0`.
  const { FlussonicClient } = await import('../flussonic/client.js');
  const byName = new Map<string, DiscoveredServer>();
  for (const [index, seed] of source.seeds.entries()) {
    const client = new FlussonicClient({
      // The seed is named by its position: its URL stays out of errors and logs.
      config: { ...template, name: `${source.name} seed ${index}`, url: seed, maxPages: Math.min(template.maxPages, 1000) },
      stats: UNCOUNTED,
      retryBackoffMs: 250,
      ...(deps.userAgent ? { userAgent: deps.userAgent } : {}),
    });
    try {
      let position = 0;
      for await (const page of client.walk('cluster/peers', { select: ['hostname', 'api_url'], key: 'hostname' }, signal)) {
        for (const peer of page) {
          const at = position++;
          const hostname = peer.hostname;
          const url = baseUrl(peer.api_url);
          if (!validName(hostname)) {
            deps.log.warn({ source: source.name, seed: index, peer: at }, 'cluster peer skipped: no usable hostname');
          } else if (url === undefined) {
            deps.log.warn({ source: source.name, seed: index, peer: hostname }, 'cluster peer skipped: api_url is not an http(s) URL without credentials');
          } else if (!byName.has(hostname)) {
            byName.set(hostname, { name: hostname, url, labels: {} });
          }
        }
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new DiscoveryError(`cluster_peers ${source.name}: ${message}`, { cause: error });
    } finally {
      await client.destroy();
    }
  }
  return [...byName.values()];
}
