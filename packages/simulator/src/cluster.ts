/**
 * GET /cluster/peers: the peers of this simulated server's cluster. Peers are other simulator
 * instances (their URLs as `api_url`), listed by hostname; tests add and remove them at run time
 * (set()) to make servers appear and vanish for discovery.
 *
 * Two response shapes, as the API files have them:
 *  - '2025' (spec-examples-go-flussonic-2025-11/peers_list.json): `public_payload_url`, stats with
 *    total_clients, total_streams, output_kbit;
 *  - '23.05' (flussonic-public-23.05-637.json `peer_config`): the since-deprecated `public`,
 *    `max_bitrate`, and stats with client_count, stream_count, output_bitrate instead.
 * Every entry carries `cluster_key` and stats carry `license_txt`, the secrets a client must
 * never pass on.
 */
import { createHash } from 'node:crypto';
import type { JsonRecord } from './query.js';

export type PeersShape = '2025' | '23.05';
export const PEERS_SHAPES: readonly PeersShape[] = ['2025', '23.05'];

export interface SimPeer {
  readonly hostname: string;
  /** The peer's API URL (another simulator on loopback). */
  readonly apiUrl: string;
  /** The peer answers with `stats.error` set (the seed cannot reach it). */
  readonly error?: string;
  /** Age of the peer's stats in ms (older than stale_timeout = stale). Default 0. */
  readonly statsAgeMs?: number;
}

/** Default cluster key of the simulator: a secret that tests look for everywhere. */
export const DEFAULT_CLUSTER_KEY = 'sim-cluster-key-never-exported';
const STALE_TIMEOUT_MS = 10_000;

export class SimCluster {
  private peers: SimPeer[] = [];
  constructor(
    public shape: PeersShape = '2025',
    public clusterKey: string = DEFAULT_CLUSTER_KEY,
  ) {}

  /** Replaces the peer list (discovery sees the change at its next refresh). */
  set(peers: readonly SimPeer[]): void {
    this.peers = [...peers];
  }

  list(): readonly SimPeer[] {
    return this.peers;
  }

  /** The peer documents at simulated time `now`, sorted by hostname. */
  docs(now: number): JsonRecord[] {
    return [...this.peers].sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0)).map((peer) => this.doc(peer, now));
  }

  private doc(peer: SimPeer, now: number): JsonRecord {
    const h = createHash('sha256').update(peer.hostname).digest();
    const wave = Math.sin(now / 60_000 + h[0]!) * 5;
    const clients = 100 + h[1]! * 10;
    const streams = 10 + (h[2]! % 50);
    const outputKbit = clients * 2500;
    const stats: JsonRecord = {
      hostname: peer.hostname,
      id: `00000000-0000-4000-8000-${h.subarray(0, 6).toString('hex')}`,
      license_txt: `LICENSE-${h.subarray(6, 14).toString('hex')}`,
      license_type: 'undefined',
      server_version: this.shape === '2025' ? '25.11' : '23.05',
      streamer_status: 'running',
      now: now - (peer.statsAgeMs ?? 0),
      started_at: Math.floor(now / 1000) - 86_400,
      uptime: 86_400,
      cpu_usage: Math.round(30 + (h[3]! % 40) + wave),
      memory_usage: 20 + (h[4]! % 50),
      bandwidth_usage: 10 + (h[5]! % 60),
      scheduler_load: 15 + (h[6]! % 30),
      online_streams: streams - (h[7]! % 3),
      opened_files: 5,
      input_kbit: streams * 4000,
      ...(this.shape === '2025' ? { total_clients: clients, total_streams: streams, output_kbit: outputKbit } : { client_count: clients, stream_count: streams, output_bitrate: outputKbit, total_bandwidth: 10_000_000 }),
      ...(peer.error !== undefined ? { error: peer.error } : {}),
    };
    const common: JsonRecord = {
      hostname: peer.hostname,
      api_url: peer.apiUrl,
      private_payload_url: peer.apiUrl,
      cluster_key: this.clusterKey,
      fetch_timeout: 1000,
      stale_timeout: STALE_TIMEOUT_MS,
      channel_limit: 500,
      cpu_limit: 90,
      stats,
    };
    return this.shape === '2025' ? { ...common, public_payload_url: peer.apiUrl } : { ...common, public: peer.apiUrl, max_bitrate: 1_000_000 };
  }
}
