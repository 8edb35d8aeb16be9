/**
 * DVR storages collector: GET /dvrs as a cursor walk, one set of samples per DVR storage.
 *
 * Where the API carries the figures (the catalogue names the 2025 fields):
 *  - Flussonic 2025 (go-flussonic `DvrConfig.stats`, type `DvrConfigStats`): a storage-level
 *    `stats` object with `size` and `used` (bytes), `usage` (percent), `blobs_count`,
 *    `blobs_count_db`, `used_index` and `errors` (`DvrStorageErrors`: kind -> count).
 *  - Flussonic 23.05 (`dvr_config` in the OpenAPI file): no storage-level stats; a RAID storage
 *    lists `disks[]` and each disk has read-only `stats` (`raid_disk_stats`): `size` (bytes),
 *    `usage` (percent), `io_usage`, `mounted`, `blobs_count`; the 2025 example adds `errors` there.
 * Each figure comes from the storage-level stats when present, else from the disks:
 *   flussonic_dvr_storage_size_bytes   stats.size, else the sum of disks[].stats.size
 *   flussonic_dvr_storage_used_bytes   stats.used, else stats.size x stats.usage / 100, else the sum
 *                                      of disks[].stats.size x usage / 100 (only when every disk
 *                                      with a size reports usage: a partial sum is not a figure)
 *   flussonic_dvr_storage_errors_total stats.errors.<error>, else disks[].stats.errors summed
 * A single-directory storage of a 23.x server reports nothing: no samples for it, and when no
 * storage on the server reports anything the collector says NO_DATA.
 */
import { defineFamilies, optInCollector, selectOf } from '../families/define.js';
import type { SeriesWriter } from '../render/series.js';
import type { JsonObject, WalkOptions } from '../flussonic/api.js';
import { NO_DATA, type CollectContext, type CollectOutcome, type Collector } from './types.js';

const SD = ['server', 'dvr'] as const;

/** The families of DVR storages; each reads the storage's `stats`, else its `disks`. */
export const DVR_FAMILIES = defineFamilies(
  'dvrs',
  {
    size: { name: 'flussonic_dvr_storage_size_bytes', type: 'gauge', labels: SD, tier: optInCollector('dvrs'), reads: ['stats', 'disks'],
      help: 'Size of a DVR storage in bytes (stats.size; without DVR-level stats, the sum of disks[].stats.size).' },
    used: { name: 'flussonic_dvr_storage_used_bytes', type: 'gauge', labels: SD, tier: optInCollector('dvrs'), reads: ['stats', 'disks'],
      help: 'Used space of a DVR storage in bytes (stats.used; without it, size x usage / 100 of the storage or of each disk).' },
    errors: { name: 'flussonic_dvr_storage_errors_total', type: 'counter', labels: ['server', 'dvr', 'error'], tier: optInCollector('dvrs'), reads: ['stats', 'disks'],
      help: 'Errors of a DVR storage by kind (stats.errors.<error>; without DVR-level stats, summed over disks[].stats.errors).' },
  },
  ['size', 'used', 'errors'],
);
const { size: SIZE, used: USED, errors: ERRORS } = DVR_FAMILIES;

/**
 * `stats` and `disks` as wholes: a server has a handful of storages, so selecting nested fields one
 * by one would save little and depend on how a server selects inside arrays.
 */
export const DVRS_WALK: WalkOptions = Object.freeze({ select: selectOf('name', DVR_FAMILIES), key: 'name' });

/** Storage figures of one DVR; undefined where the server reports no such figure. */
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
  const own = objectField(dvr.stats, SIZE, [name, 'stats'], out);
  const disks = diskSums(dvr.disks, name, out);

  let size = numeric(own?.size, SIZE, name, out);
  const ownUsage = numeric(own?.usage, USED, name, out);
  let used = numeric(own?.used, USED, name, out);
  if (used === undefined && size !== undefined && ownUsage !== undefined) used = (size * ownUsage) / 100;
  if (size === undefined && used === undefined) {
    size = disks.size;
    used = disks.used;
  }
  const ownErrors = objectField(own?.errors, ERRORS, [name, 'stats.errors'], out);
  const errors = ownErrors ? errorCounts([ownErrors], name, out) : disks.errors;

  if (size === undefined && used === undefined && errors.size === 0) return undefined;
  return { name, sizeBytes: size, usedBytes: used, errors };
}

/** Sums over `disks[].stats` (the 23.05 RAID shape). */
function diskSums(disks: unknown, dvr: string, out: SeriesWriter): { size?: number; used?: number; errors: Map<string, number> } {
  if (disks === undefined || disks === null) return { errors: new Map() };
  if (!Array.isArray(disks)) {
    out.recordProblem(SIZE, [dvr, 'disks'], disks);
    return { errors: new Map() };
  }
  let size: number | undefined;
  let used: number | undefined;
  let usedComplete = true;
  const errorObjects: JsonObject[] = [];
  for (const disk of disks as unknown[]) {
    const stats = isObject(disk) ? objectField(disk.stats, SIZE, [dvr, 'disks[].stats'], out) : undefined;
    if (stats === undefined) continue;
    const diskSize = numeric(stats.size, SIZE, dvr, out);
    const usage = numeric(stats.usage, USED, dvr, out);
    if (diskSize !== undefined) {
      size = (size ?? 0) + diskSize;
      if (usage === undefined) usedComplete = false;
      else used = (used ?? 0) + (diskSize * usage) / 100;
    }
    const errors = objectField(stats.errors, ERRORS, [dvr, 'disks[].stats.errors'], out);
    if (errors) errorObjects.push(errors);
  }
  return { size, used: usedComplete ? used : undefined, errors: errorCounts(errorObjects, dvr, out) };
}

function errorCounts(objects: readonly JsonObject[], dvr: string, out: SeriesWriter): Map<string, number> {
  const counts = new Map<string, number>();
  for (const errors of objects) {
    for (const [kind, count] of Object.entries(errors)) {
      const n = numeric(count, ERRORS, dvr, out);
      if (n !== undefined) counts.set(kind, (counts.get(kind) ?? 0) + n);
    }
  }
  return counts;
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

/** An optional object field: absent gives undefined; another type is a shape problem. */
function objectField(v: unknown, def: typeof SIZE, where: readonly string[], out: SeriesWriter): JsonObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (isObject(v)) return v;
  out.recordProblem(def, where, v);
  return undefined;
}

function numeric(v: unknown, def: typeof SIZE, dvr: string, out: SeriesWriter): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  out.recordProblem(def, [dvr], v);
  return undefined;
}
