import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dvrStorageStats } from '../../src/collect/dvrs.js';
import type { JsonObject } from '../../src/flussonic/api.js';
import { SeriesWriter } from '../../src/render/series.js';
import { SAMPLES_2025, sharedFile } from '../helpers/shared.js';

function writer(): SeriesWriter {
  return new SeriesWriter([['server', 'edge-1']]);
}

describe('DVR storage mapping (pure)', () => {
  const listPath = sharedFile(`${SAMPLES_2025}/dvrs_list.json`);

  it.skipIf(!listPath)('sums the per-kind error counters of disks[].stats.errors in the 2025 dvrs_list example', () => {
    const list = JSON.parse(readFileSync(listPath!, 'utf8')) as { dvrs: JsonObject[] };
    const out = writer();
    const stats = dvrStorageStats(list.dvrs[0]!, out);
    expect(stats?.name).toBe('example');
    // The example disk has no size/usage (no `example:` values for them in the schema): no sample.
    expect(stats?.sizeBytes).toBeUndefined();
    expect(stats?.usedBytes).toBeUndefined();
    expect(stats?.errors.get('enospc')).toBe(1);
    expect(stats?.errors.size).toBe(14);
    expect(out.problemCount).toBe(0);
  });

  it('reads the storage-level stats of a 2025 server (DvrConfigStats) and ignores the per-disk ones then', () => {
    const dvr = {
      name: 'main',
      stats: { size: 8000, used: 6000, usage: 75, blobs_count: 10, errors: { enospc: 2, eacces: 0 } },
      disks: [{ path: 'd1', stats: { size: 1, usage: 1, errors: { enospc: 100 } } }],
    };
    const stats = dvrStorageStats(dvr, writer());
    expect(stats).toMatchObject({ name: 'main', sizeBytes: 8000, usedBytes: 6000 });
    expect([...stats!.errors]).toEqual([
      ['enospc', 2],
      ['eacces', 0],
    ]);
  });

  it('derives used bytes from the storage-level usage percent when `used` is absent', () => {
    expect(dvrStorageStats({ name: 'main', stats: { size: 8000, usage: 25 } }, writer())).toMatchObject({ sizeBytes: 8000, usedBytes: 2000 });
  });

  it('adds size and size x usage / 100 over the disks of a RAID storage (raid_disk_stats, 23.05)', () => {
    const dvr = {
      name: 'raid',
      root: '/storage',
      disks: [
        { path: 'd1', stats: { size: 1000, usage: 50, io_usage: 3, mounted: true, errors: { eio: 2 } } },
        { path: 'd2', stats: { size: 3000, usage: 10, errors: { eio: 1, enospc: 4 } } },
      ],
    };
    const stats = dvrStorageStats(dvr, writer());
    expect(stats).toMatchObject({ name: 'raid', sizeBytes: 4000, usedBytes: 800 });
    expect([...stats!.errors]).toEqual([
      ['eio', 3],
      ['enospc', 4],
    ]);
  });

  it('reports no used bytes when a disk with a size lacks usage, rather than a partial sum', () => {
    const dvr = { name: 'raid', disks: [{ path: 'd1', stats: { size: 1000, usage: 50 } }, { path: 'd2', stats: { size: 1000 } }] };
    expect(dvrStorageStats(dvr, writer())).toMatchObject({ sizeBytes: 2000, usedBytes: undefined });
  });

  it('gives nothing for a single-directory storage, which reports no stats', () => {
    expect(dvrStorageStats({ name: 'plain', root: '/var/dvr' }, writer())).toBeUndefined();
    expect(dvrStorageStats({ name: 'raid', disks: [{ path: 'd1' }] }, writer())).toBeUndefined();
    expect(dvrStorageStats({ name: 'raid', stats: {}, disks: [] }, writer())).toBeUndefined();
  });

  it('records values of the wrong type as shape problems instead of dropping them silently', () => {
    const out = writer();
    const stats = dvrStorageStats({ name: 'raid', disks: [{ path: 'd1', stats: { size: '1000', errors: { eio: 'x', ebusy: 2 } } }] }, out);
    expect(stats?.sizeBytes).toBeUndefined();
    expect([...stats!.errors]).toEqual([['ebusy', 2]]);
    expect(out.problemCount).toBe(2);
    expect(out.problems.map((p) => p.got)).toEqual(['string "1000"', 'string "x"']);
  });
});
