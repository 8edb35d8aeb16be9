/**
 * Which replica owns which target: the one place that decides (architecture.md, "Threads and
 * fleets"). As in kube-state-metrics, every replica computes the same function of the target's
 * name and keeps only its own share; replicas never talk to each other.
 *
 * The hash: FNV-1a 64 of the name's UTF-8 bytes, then MurmurHash3's 64-bit finaliser (fmix64),
 * mapped to a shard with Jump Consistent Hash (Lamping and Veach, 2014); kube-state-metrics does
 * FNV-1a 64 + jump over object UIDs. FNV-1a is stable across processes, versions and platforms;
 * fmix64 spreads names that differ only in a trailing digit (`edge-1`, `edge-2`: FNV alone left
 * shards 16% apart on such names); the jump step spreads evenly and, when total_shards grows from
 * M to M+1, moves only about 1/(M+1) of the targets (`hash mod M` would move most of them).
 */
import { hostname } from 'node:os';
import { fmix64, fnv1a64 } from '../lib/hash.js';

export interface ShardSpec {
  /** This replica's shard, 0 <= shard < totalShards. */
  readonly shard: number;
  readonly totalShards: number;
}

/** One replica owning everything: the default. */
export const SINGLE_SHARD: ShardSpec = Object.freeze({ shard: 0, totalShards: 1 });

const MASK_64 = 0xffffffffffffffffn;

/** Jump Consistent Hash: the bucket in [0, buckets) of a 64-bit key. */
export function jumpHash(key: bigint, buckets: number): number {
  let b = -1;
  let j = 0;
  let k = key;
  while (j < buckets) {
    b = j;
    k = (k * 2862933555777941757n + 1n) & MASK_64;
    j = Math.floor((b + 1) * (2 ** 31 / (Number(k >> 33n) + 1)));
  }
  return b;
}

/** The shard that owns the target with this name, out of `totalShards`. */
export function shardOf(name: string, totalShards: number): number {
  return totalShards <= 1 ? 0 : jumpHash(fmix64(fnv1a64(name)), totalShards);
}

/** Whether this replica polls the Flussonic server with this name. */
export function ownsServer(spec: ShardSpec, name: string): boolean {
  return shardOf(name, spec.totalShards) === spec.shard;
}

/**
 * Whether this replica polls a Catena service. Catena targets are few and keep a state file, so
 * they are not hashed: each has a fixed shard (`catena[].shard`, default 0). A shard number at or
 * beyond total_shards wraps around (shard mod total), so that no service is left unpolled.
 */
export function ownsCatena(spec: ShardSpec, catenaShard: number): boolean {
  return catenaShard % spec.totalShards === spec.shard;
}

/** A shard spec from `--shard N --total-shards M`, or the reason it is not one. */
export function checkShardSpec(shard: number, totalShards: number): ShardSpec | string {
  if (!Number.isInteger(totalShards) || totalShards < 1 || totalShards > 10_000) return `total shards must be an integer from 1 to 10000, got ${totalShards}`;
  if (!Number.isInteger(shard) || shard < 0 || shard >= totalShards) return `shard must be an integer from 0 to ${totalShards - 1} (below the total of ${totalShards}), got ${shard}`;
  return { shard, totalShards };
}

/**
 * The StatefulSet ordinal in a pod name: `flussonic-exporter-2` is shard 2. The pod name is
 * $HOSTNAME (what Kubernetes sets) or else the host name. Returns the reason when the name does
 * not end in `-<ordinal>`.
 */
export function ordinalFromHostname(name: string = process.env.HOSTNAME || hostname()): number | string {
  const match = /-(\d{1,5})$/.exec(name.trim());
  if (!match) return `the host name ${JSON.stringify(name)} does not end in -<ordinal> (a StatefulSet pod name like flussonic-exporter-0)`;
  return Number(match[1]);
}

/** The sharding flags as parseArgs gives them. */
export interface ShardFlags {
  readonly shard?: string;
  readonly totalShards?: string;
  readonly fromHostname?: boolean;
}

/**
 * `--shard N --total-shards M`, or `--shard-from-hostname --total-shards M` (the ordinal of the
 * StatefulSet pod name), or none (one replica owns everything). Returns the reason when the
 * combination is wrong; `hostName` is for tests.
 */
export function shardFromFlags(flags: ShardFlags, hostName?: string): ShardSpec | string {
  const { shard, totalShards, fromHostname } = flags;
  if (shard === undefined && totalShards === undefined && !fromHostname) return SINGLE_SHARD;
  if (fromHostname && shard !== undefined) return '--shard and --shard-from-hostname exclude each other';
  if (totalShards === undefined) return `${fromHostname ? '--shard-from-hostname' : '--shard'} needs --total-shards M (the number of replicas)`;
  if (!/^\d{1,5}$/.test(totalShards)) return `--total-shards: expected a positive integer, got ${JSON.stringify(totalShards)}`;
  let ordinal: number;
  if (fromHostname) {
    const found = ordinalFromHostname(hostName);
    if (typeof found === 'string') return `--shard-from-hostname: ${found}`;
    ordinal = found;
  } else {
    if (shard === undefined) return '--total-shards needs --shard N or --shard-from-hostname';
    if (!/^\d{1,5}$/.test(shard)) return `--shard: expected an integer from 0, got ${JSON.stringify(shard)}`;
    ordinal = Number(shard);
  }
  const spec = checkShardSpec(ordinal, Number(totalShards));
  return typeof spec === 'string' ? `${fromHostname ? '--shard-from-hostname' : '--shard'}: ${spec}` : spec;
}
