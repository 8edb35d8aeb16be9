/**
 * DVR storages collector: GET /dvrs as a cursor walk, one set of samples per DVR storage.
 *
 * Where the API carries the figures: a DVR storage (`dvr_config` in the 23.05 OpenAPI) has no
 * statistics of its own; a RAID storage lists its `disks[]`, and each disk has read-only `stats`
 * (`raid_disk_stats`): `size` (bytes), `usage` (percent of the disk used), `io_usage`, `mounted`,
 * `blobs_count`, and since the 2025 schema `errors` (an object of error kind to count, see the
 * go-flussonic `dvrs_list` example). The storage-level families of the catalogue are the sums over
 * the disks that report them:
 *   flussonic_dvr_storage_size_bytes   = sum of disks[].stats.size
 *   flussonic_dvr_storage_used_bytes   = sum of disks[].stats.size x disks[].stats.usage / 100
 *                                        (only when every disk with a size also reports usage,
 *                                        so a partial sum never looks like a real figure)
 *   flussonic_dvr_storage_errors_total = sum of disks[].stats.errors.<error>, per error kind
 * A single-directory storage (only `root`, no `disks`) reports nothing: no samples for it, and when
 * no storage on the server reports anything the collector says NO_DATA.
 */
import { familyByName } from '../metrics/catalogue.js';
import type { SeriesWriter } from '../metrics/series.js';
import type { JsonObject, WalkOptions } from '../flussonic/api.js';
import { NO_DATA, type CollectContext, type CollectOutcome, type Collector } from './types.js';

const SIZE = familyByName('flussonic_dvr_storage_size_bytes');
const USED = familyByName('flussonic_dvr_storage_used_bytes');
const ERRORS = familyByName('flussonic_dvr_storage_errors_total');

/**
 * `disks` as a whole: a server has a handful of storages and disks, so selecting the nested stats
 * field by field would save nothing worth the risk of a server that cannot select inside arrays.
 */
export const DVRS_WALK: WalkOptions = Object.freeze({ select: ['name', 'disks'], key: 'name' });

/** Storage figures of one DVR, summed over its disks; undefined where no disk reports the field. */
export interface DvrStorageStats {
  readonly name: string;
  readonly sizeBytes: number | undefined;
  readonly usedBytes: number | undefined;
  /** Error kind to count, in the order first seen. */
  readonly errors: ReadonlyMap<string, number>;
}

/** Pure mapping of one `/dvrs` item; undefined when it carries no storage figures at all. */
export function dvrStorageStats(dvr: JsonObject, out: SeriesWriter): DvrStorageStats | undefined {
  const name = dvr.name;
  if (typeof name !== 'string') {
    out.recordProblem(SIZE, ['name'], name);
    return undefined;
  }
  const disks = dvr.disks;
  if (disks === undefined || disks === null) return undefined;
  if (!Array.isArray(disks)) {
    out.recordProblem(SIZE, [name, 'disks'], disks);
    return undefined;
  }
  let size: number | undefined;
  let used: number | undefined;
  let usedComplete = true;
  const errors = new Map<string, number>();
  for (const disk of disks as unknown[]) {
    const stats = isObject(disk) ? disk.stats : undefined;
    if (stats === undefined || stats === null) continue;
    if (!isObject(stats)) {
      out.recordProblem(SIZE, [name, 'disks[].stats'], stats);
      continue;
    }
    const diskSize = numeric(stats.size, SIZE, name, out);
    const usage = numeric(stats.usage, USED, name, out);
    if (diskSize !== undefined) {
      size = (size ?? 0) + diskSize;
      if (usage === undefined) usedComplete = false;
      else used = (used ?? 0) + (diskSize * usage) / 100;
    }
    const diskErrors = stats.errors;
    if (diskErrors === undefined || diskErrors === null) continue;
    if (!isObject(diskErrors)) {
      out.recordProblem(ERRORS, [name], diskErrors);
      continue;
    }
    for (const [kind, count] of Object.entries(diskErrors)) {
      const n = numeric(count, ERRORS, name, out);
      if (n !== undefined) errors.set(kind, (errors.get(kind) ?? 0) + n);
    }
  }
  if (size === undefined && errors.size === 0) return undefined;
  return { name, sizeBytes: size, usedBytes: usedComplete ? used : undefined, errors };
}

export class DvrsCollector implements Collector {
  async collect(ctx: CollectContext): Promise<CollectOutcome> {
    let reported = 0;
    for await (const page of ctx.client.walk('/dvrs', DVRS_WALK, ctx.signal)) {
      for (const dvr of page) {
        const stats = dvrStorageStats(dvr, ctx.out);
        if (stats === undefined) continue;
        reported++;
        ctx.out.add(SIZE, [stats.name], stats.sizeBytes);
        ctx.out.add(USED, [stats.name], stats.usedBytes);
        for (const [kind, count] of stats.errors) ctx.out.add(ERRORS, [stats.name, kind], count);
      }
    }
    return reported === 0 ? NO_DATA : undefined;
  }
}

export function createDvrsCollector(): DvrsCollector {
  return new DvrsCollector();
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function numeric(v: unknown, def: typeof SIZE, dvr: string, out: SeriesWriter): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  out.recordProblem(def, [dvr], v);
  return undefined;
}
