/**
 * Collector `cluster` (off by default): the cluster as this server sees it, from
 * GET /cluster/peers, mapped to the flussonic_cluster_* families, one series per peer labelled by
 * the peer's hostname.
 *
 * A peer entry carries secrets and identifiers that must never reach /metrics (`cluster_key`,
 * `stats.license_txt`, the runtime `stats.id`) and URLs. The walk asks only for `hostname`,
 * `stale_timeout` and `stats`, and of `stats` only the numbers below are read, so none of them is
 * ever handled here. This collector knows nothing of discovery: discovery reads the same endpoint
 * on its own schedule (src/fleet/cluster-peers.ts).
 */
import { defineFamilies, optInCollector, selectOf } from '../families/define.js';
import type { SeriesWriter } from '../render/series.js';
import { addNumber, kbitPerSecondToBytes, labelText, objectField, percentToRatio, prefer } from './fields.js';
import type { CollectContext, Collector } from './types.js';

const S = ['server'] as const;
const PEER = ['server', 'peer'] as const;

/** The collector is opt-in: every family of its table is in its switch's tier. */
const CLUSTER_TIER = optInCollector('cluster');

/** A gauge of one number of a peer's `stats`, one series per peer. */
const peerStat = (name: string, help: string) => ({ name, type: 'gauge', labels: PEER, tier: CLUSTER_TIER, reads: ['hostname', 'stats'], help }) as const;

/** The families of the cluster view: one series per peer, `peers` one per server. */
export const CLUSTER_FAMILIES = defineFamilies(
  'cluster',
  {
    peers: { name: 'flussonic_cluster_peers', type: 'gauge', labels: S, tier: CLUSTER_TIER, reads: ['hostname'],
      help: 'Peers listed by this server (GET /cluster/peers).' },
    up: { name: 'flussonic_cluster_peer_up', type: 'gauge', labels: PEER, tier: CLUSTER_TIER, reads: ['hostname', 'stale_timeout', 'stats'],
      help: '1 when the server has fresh stats of the peer without an error (stats present, error empty, now within stale_timeout), else 0.' },
    cpu: peerStat('flussonic_cluster_peer_cpu_usage_ratio', 'CPU usage of the peer, 0..1 (stats.cpu_usage / 100).'),
    memory: peerStat('flussonic_cluster_peer_memory_usage_ratio', 'Memory usage of the peer, 0..1 (stats.memory_usage / 100).'),
    bandwidth: peerStat('flussonic_cluster_peer_bandwidth_usage_ratio', 'Bandwidth usage of the peer, 0..1 (stats.bandwidth_usage / 100).'),
    clients: peerStat('flussonic_cluster_peer_clients', 'Clients of the peer (stats.total_clients, else client_count).'),
    streams: peerStat('flussonic_cluster_peer_streams', 'Streams of the peer (stats.total_streams, else stream_count).'),
    onlineStreams: peerStat('flussonic_cluster_peer_online_streams', 'Online streams of the peer (stats.online_streams).'),
    inputBytes: peerStat('flussonic_cluster_peer_input_bytes_per_second', 'Incoming traffic of the peer in bytes per second (stats.input_kbit x 125).'),
    outputBytes: peerStat('flussonic_cluster_peer_output_bytes_per_second', 'Outgoing traffic of the peer in bytes per second (stats.output_kbit x 125, else output_bitrate x 125).'),
  },
  ['peers', 'up', 'cpu', 'memory', 'bandwidth', 'clients', 'streams', 'onlineStreams', 'inputBytes', 'outputBytes'],
);
const F = CLUSTER_FAMILIES;

/** The fields of a peer this collector reads; everything else of the entry is never asked for. */
export const PEER_SELECT: readonly string[] = selectOf('hostname', CLUSTER_FAMILIES);

interface PeerStats {
  readonly error?: unknown;
  readonly now?: unknown;
  readonly cpu_usage?: unknown;
  readonly memory_usage?: unknown;
  readonly bandwidth_usage?: unknown;
  readonly total_clients?: unknown;
  readonly client_count?: unknown;
  readonly total_streams?: unknown;
  readonly stream_count?: unknown;
  readonly online_streams?: unknown;
  readonly input_kbit?: unknown;
  readonly output_kbit?: unknown;
  readonly output_bitrate?: unknown;
}

interface Peer {
  readonly hostname?: unknown;
  readonly stale_timeout?: unknown;
  readonly stats?: unknown;
}

/** Maps the peers of one walk; `nowMs` decides staleness against `stats.now` + `stale_timeout`. */
export function mapPeers(out: SeriesWriter, peers: readonly unknown[], nowMs: number): void {
  const seen = new Set<string>();
  for (const raw of peers) {
    const peer = objectField<Peer>(out, F.up, [], raw);
    const hostname = peer ? labelText(peer.hostname) : '';
    if (!peer || hostname === '' || seen.has(hostname)) continue;
    seen.add(hostname);
    const labels = [hostname];
    const stats = peer.stats === null || peer.stats === undefined ? undefined : objectField<PeerStats>(out, F.up, labels, peer.stats);
    out.add(F.up, labels, stats !== undefined && fresh(stats, peer.stale_timeout, nowMs) ? 1 : 0);
    if (!stats) continue;
    addNumber(out, F.cpu, labels, stats.cpu_usage, percentToRatio);
    addNumber(out, F.memory, labels, stats.memory_usage, percentToRatio);
    addNumber(out, F.bandwidth, labels, stats.bandwidth_usage, percentToRatio);
    addNumber(out, F.clients, labels, prefer(stats.total_clients, stats.client_count));
    addNumber(out, F.streams, labels, prefer(stats.total_streams, stats.stream_count));
    addNumber(out, F.onlineStreams, labels, stats.online_streams);
    addNumber(out, F.inputBytes, labels, stats.input_kbit, kbitPerSecondToBytes);
    addNumber(out, F.outputBytes, labels, prefer(stats.output_kbit, stats.output_bitrate), kbitPerSecondToBytes);
  }
  out.add(F.peers, [], seen.size);
}

/** No error reported, and the stats not older than the peer's stale_timeout (when both are known). */
function fresh(stats: PeerStats, staleTimeout: unknown, nowMs: number): boolean {
  if (typeof stats.error === 'string' && stats.error !== '') return false;
  if (typeof stats.now !== 'number' || typeof staleTimeout !== 'number' || staleTimeout <= 0) return true;
  return nowMs - stats.now <= staleTimeout;
}

export function createClusterCollector(now: () => number = Date.now): Collector {
  return {
    async collect(ctx: CollectContext): Promise<void> {
      const peers: unknown[] = [];
      for await (const page of ctx.client.walk('cluster/peers', { select: PEER_SELECT, key: 'hostname' }, ctx.signal)) peers.push(...page);
      mapPeers(ctx.out, peers, now());
    },
  };
}
