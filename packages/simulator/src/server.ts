/**
 * Server-wide state: `GET /config/stats` (the `server_stats` schema: load, uptime, clients,
 * traffic, partitions, transcoder devices with GPU load and temperature) and the DVR storages of
 * `GET /dvrs`.
 *
 * DVR stats: the 23.05 OpenAPI has only per-disk stats (`disks[].stats`: size, usage, io_usage,
 * blobs_count, mounted, mode); Flussonic 2025 (go-flussonic `DvrConfigStats`) adds a DVR-level
 * `stats` object {blobs_count, blobs_count_db, size, used, usage, used_index, errors{...}} whose
 * `errors` has the keys of `DvrStorageErrors` (connection_timeout, eacces, ... ssl_error). The
 * nested shape serves both; the flat shape only the per-disk stats, unless `dvrStats` says otherwise.
 */
import type { JsonRecord } from './query.js';
import type { Rng } from './rng.js';

export const DVR_ERROR_KEYS = [
  'connection_timeout',
  'eacces',
  'eagain',
  'ebusy',
  'econnrefused',
  'edquot',
  'emfile',
  'enodev',
  'enoent',
  'enospc',
  'erofs',
  'nxdomain',
  'other',
  'ssl_error',
] as const;
export type DvrErrorKey = (typeof DVR_ERROR_KEYS)[number];

export interface TranscoderDevice {
  id: number;
  type: 'nvenc' | 'cpu' | 'qsv' | 'coder';
  name: string;
  uuid: string;
  /** MiB, as Flussonic reports NVIDIA memory. */
  memTotal: number;
  memUsed: number;
  gpu_temp: number;
  gpu_enc: number;
  gpu_dec: number;
  gpu_sm: number;
  /** Streams transcoding on it (drives load). */
  streams: number;
}

interface DvrDisk {
  path: string;
  size: number;
  used: number;
  blobs: number;
  ioUsage: number;
}

export interface DvrStorage {
  name: string;
  root: string;
  expiration: number;
  diskUsageLimit: number;
  disks: DvrDisk[];
  errors: Record<DvrErrorKey, number>;
  /** Bytes written per second by the streams recording here (set by the world each step). */
  writeRate: number;
}

/** Load (percent) of a GPU running n transcoders: rises with n, saturates below 100. */
export function gpuLoad(transcoders: number, perStream: number): number {
  return 100 * (1 - Math.exp(-transcoders * perStream));
}

export class ServerState {
  readonly id: string;
  readonly hostname = 'sim-edge-1.example.net';
  /** Changes when the simulated server restarts (world.restartServer). */
  startedAt: number;
  readonly devices: TranscoderDevice[];
  readonly dvrs: DvrStorage[];
  readonly partitions: { path: string; device: string; total_mb: number; usage: number; io_util: number }[];
  cpu = 20;
  memory = 30;
  events = { resent_events: 0, dropped_events: 0 };
  /** Fields a test set with `world.server.set()`; they win over the computed ones. */
  overrides: JsonRecord = {};
  private totals = { clients: 0, streams: 0, online: 0, inputKbit: 0, outputKbit: 0, transcoded: 0, dvrSessions: 0 };

  constructor(
    private readonly rng: Rng,
    now: number,
    gpus: number,
    dvrCount: number,
    readonly version: string,
    readonly build: number,
  ) {
    this.id = rng.uuid();
    this.startedAt = Math.floor((now - rng.int(3600_000, 30 * 86400_000)) / 1000) * 1000;
    this.devices = Array.from({ length: gpus }, (_, i) => ({
      id: i,
      type: 'nvenc' as const,
      name: i % 2 === 0 ? 'NVIDIA Tesla T4' : 'NVIDIA L4',
      uuid: `GPU-${rng.uuid()}`,
      memTotal: i % 2 === 0 ? 15360 : 23034,
      memUsed: 300,
      gpu_temp: 38,
      gpu_enc: 0,
      gpu_dec: 0,
      gpu_sm: 0,
      streams: 0,
    }));
    this.dvrs = Array.from({ length: dvrCount }, (_, i) => {
      const disks = Array.from({ length: 2 + (i % 3) }, (_, d) => {
        const size = rng.pick([4, 8, 12, 16]) * 1_000_000_000_000;
        return { path: `/storage/dvr${i}/disk${d + 1}`, size, used: Math.round(size * rng.float(0.3, 0.8)), blobs: rng.int(100_000, 2_000_000), ioUsage: rng.int(5, 40) };
      });
      const errors = Object.fromEntries(DVR_ERROR_KEYS.map((k) => [k, 0])) as Record<DvrErrorKey, number>;
      errors.other = rng.int(0, 3);
      return { name: `dvr${i}`, root: `/storage/dvr${i}`, expiration: 7 * 86400, diskUsageLimit: 95, disks, errors, writeRate: 0 };
    });
    this.partitions = [
      { path: '/', device: 'nvme0n1p2', total_mb: 460_000, usage: 23, io_util: 3 },
      { path: '/storage', device: 'md0', total_mb: 32_000_000, usage: 61, io_util: 17 },
    ];
  }

  deviceLoad(id: number): number {
    const d = this.devices.find((x) => x.id === id);
    return d ? Math.max(d.gpu_enc, d.gpu_sm) : 0;
  }

  step(dt: number, now: number, churn: boolean, totals: ServerState['totals'], perDevice: ReadonlyMap<number, number>): void {
    this.totals = totals;
    const seconds = dt / 1000;
    const rng = this.rng;
    const noise = (scale: number) => (churn ? scale * rng.gaussian() : 0);
    // Loads follow their targets with a time constant of ~30 s, plus noise: no jumps between polls.
    const follow = (value: number, target: number) => value + (target - value) * (1 - Math.exp(-seconds / 30));
    const clamp = (v: number) => Math.max(0, Math.min(100, v));

    const cpuTarget = 8 + totals.transcoded * (this.devices.length > 0 ? 0.8 : 6) + totals.clients * 0.002 + totals.online * 0.05;
    this.cpu = clamp(follow(this.cpu, cpuTarget) + noise(1.5));
    this.memory = clamp(follow(this.memory, 18 + totals.clients * 0.0004 + totals.online * 0.02) + noise(0.3));
    for (const d of this.devices) {
      d.streams = perDevice.get(d.id) ?? 0;
      d.gpu_enc = Math.round(clamp(follow(d.gpu_enc, gpuLoad(d.streams, 0.1)) + noise(2)));
      d.gpu_dec = Math.round(clamp(follow(d.gpu_dec, gpuLoad(d.streams, 0.07)) + noise(2)));
      d.gpu_sm = Math.round(clamp(follow(d.gpu_sm, gpuLoad(d.streams, 0.08)) + noise(2)));
      d.memUsed = Math.min(d.memTotal, Math.round(300 + d.streams * 180 + noise(5)));
      d.gpu_temp = Math.round(follow(d.gpu_temp, 35 + 0.5 * Math.max(d.gpu_enc, d.gpu_sm)) + noise(0.5));
    }
    for (const dvr of this.dvrs) {
      const perDisk = (dvr.writeRate * seconds) / Math.max(1, dvr.disks.length);
      for (const disk of dvr.disks) {
        // Old recordings expire at roughly the rate new ones arrive once the disk is near its limit.
        const limit = disk.size * (dvr.diskUsageLimit / 100);
        disk.used = Math.min(limit, disk.used + perDisk);
        if (disk.used >= limit * 0.999) disk.used = limit * 0.97;
        disk.blobs += Math.round(perDisk / 4_000_000);
        disk.ioUsage = Math.round(clamp(follow(disk.ioUsage, 10 + dvr.writeRate / 5_000_000) + noise(1)));
      }
      if (churn) {
        for (const key of DVR_ERROR_KEYS) if (rng.chance(1 - Math.exp(-dt / (key === 'other' ? 3600_000 : 24 * 3600_000)))) dvr.errors[key]++;
      }
    }
    if (churn && rng.chance(1 - Math.exp(-dt / 600_000))) this.events.resent_events += rng.int(1, 20);
    if (churn && rng.chance(1 - Math.exp(-dt / 3600_000))) this.events.dropped_events += rng.int(1, 5);
    for (const p of this.partitions) p.io_util = Math.round(clamp(follow(p.io_util, p.path === '/storage' ? 10 + totals.dvrSessions * 0.05 : 3) + noise(1)));
    void now;
  }

  /** GET /config/stats */
  stats(now: number): JsonRecord {
    const t = this.totals;
    const stats: JsonRecord = {
      server_version: this.version,
      build: this.build,
      now,
      started_at: Math.floor(this.startedAt / 1000),
      streamer_status: 'running',
      hostname: this.hostname,
      id: this.id,
      license_type: 'online',
      license_txt: 'sim-license-7f3a9c2e1b',
      config_version: [Math.floor(this.startedAt / 1000), 4],
      transcoder: this.devices.length > 0,
      cpu_usage: Math.round(this.cpu),
      memory_usage: Math.round(this.memory),
      scheduler_load: Math.round(Math.min(100, this.cpu * 0.8)),
      bandwidth_usage: Math.round(Math.min(100, (t.outputKbit / 10_000_000) * 100)),
      uptime: Math.floor((now - this.startedAt) / 1000),
      total_clients: t.clients,
      total_streams: t.streams,
      online_streams: t.online,
      opened_files: t.dvrSessions,
      input_kbit: t.inputKbit,
      output_kbit: t.outputKbit,
      partitions: this.partitions.map((p) => ({ ...p })),
      events: { ...this.events },
      text_alerts: {},
    };
    if (this.devices.length > 0) {
      stats.transcoder_devices = this.devices.map((d) => ({
        type: d.type,
        id: d.id,
        name: d.name,
        uuid: d.uuid,
        can_logo: true,
        can_interlace: true,
        can_internal: false,
        reconfig_support: 'full',
        memTotal: d.memTotal,
        memUsed: d.memUsed,
        memFree: d.memTotal - d.memUsed,
        gpu_temp: d.gpu_temp,
        gpu_enc: d.gpu_enc,
        gpu_dec: d.gpu_dec,
        gpu_sm: d.gpu_sm,
      }));
    }
    return { ...stats, ...this.overrides };
  }

  /** One DVR as GET /dvrs serves it. */
  dvrDoc(dvr: DvrStorage, withStats: boolean): JsonRecord {
    const doc: JsonRecord = {
      name: dvr.name,
      root: dvr.root,
      expiration: dvr.expiration,
      disk_usage_limit: dvr.diskUsageLimit,
      disks: dvr.disks.map((disk) => ({
        path: disk.path,
        mode: 'normal',
        stats: { disk: disk.path, path: disk.path, mounted: true, mode: 'normal', blobs_count: disk.blobs, size: disk.size, usage: Math.round((disk.used / disk.size) * 100), io_usage: disk.ioUsage },
      })),
    };
    if (withStats) {
      const size = dvr.disks.reduce((s, d) => s + d.size, 0);
      const used = Math.round(dvr.disks.reduce((s, d) => s + d.used, 0));
      const blobs = dvr.disks.reduce((s, d) => s + d.blobs, 0);
      doc.stats = { size, used, usage: Math.round((used / size) * 100), blobs_count: blobs, blobs_count_db: blobs, used_index: Math.round(blobs * 512), errors: { ...dvr.errors } };
    }
    return doc;
  }
}
