/**
 * How many CPUs this process may use: the cores it may run on (os.availableParallelism()), lowered
 * by a CPU quota of its cgroup (a container's CPU limit). On Node 20 availableParallelism() reads
 * only the CPU affinity, not the quota, so a pod limited to 2 CPUs on a 64-core node would start 64
 * worker threads; this module reads the quota itself.
 *
 * cgroup v2: `cpu.max` ("QUOTA PERIOD" or "max PERIOD") of the process's cgroup (from
 * /proc/self/cgroup, line `0::/path`) and of every parent up to the root; the smallest quota wins.
 * cgroup v1: `cpu.cfs_quota_us` (-1: none) and `cpu.cfs_period_us` of the `cpu` controller's
 * cgroup (mounted at cpu/, cpu,cpuacct/ or cpuacct,cpu/). A fractional quota is rounded down
 * (1.5 CPUs: 1), leaving the fraction to the serving thread; never below 1. Unreadable or
 * malformed files count as no limit.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { posix } from 'node:path';

/** Where the files are read (a fixture directory in tests). */
export interface CgroupPaths {
  /** The cgroup file system's mount point (/sys/fs/cgroup). */
  readonly root: string;
  /** The process's cgroup membership (/proc/self/cgroup). */
  readonly self: string;
}

const SYSTEM: CgroupPaths = { root: '/sys/fs/cgroup', self: '/proc/self/cgroup' };
const V1_CPU_DIRS = ['cpu', 'cpu,cpuacct', 'cpuacct,cpu'];

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Quota / period in CPUs, or undefined for no limit or unreadable text. */
function ratio(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined;
  return quota / period;
}

/** `cpu.max`: "max 100000" (no limit) or "200000 100000" (2 CPUs). */
export function parseCpuMax(text: string): number | undefined {
  const [quota, period] = text.trim().split(/\s+/);
  if (quota === undefined || quota === 'max' || period === undefined) return undefined;
  if (!/^\d+$/.test(quota) || !/^\d+$/.test(period)) return undefined;
  return ratio(Number(quota), Number(period));
}

/** The cgroup paths in /proc/self/cgroup: v2 (`0::/path`) and v1's cpu controller (`N:cpu,cpuacct:/path`). */
export function parseSelfCgroup(text: string): { v2?: string; v1cpu?: string } {
  const out: { v2?: string; v1cpu?: string } = {};
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1).trim();
    if (!path.startsWith('/')) continue;
    if (line.slice(0, first) === '0' && controllers === '') out.v2 = path;
    else if (controllers.split(',').includes('cpu')) out.v1cpu = path;
  }
  return out;
}

/** The cgroup's own directory and each parent up to the mount point, deepest first. */
function chain(mount: string, cgroup: string): string[] {
  const dirs: string[] = [];
  let path = posix.normalize(cgroup);
  for (;;) {
    dirs.push(posix.join(mount, path));
    if (path === '/' || path === '.') break;
    path = posix.dirname(path);
  }
  return dirs;
}

/** The CPU quota of the process's cgroup in CPUs (fractional), or undefined when there is none. */
export function cgroupCpuQuota(paths: CgroupPaths = SYSTEM): number | undefined {
  const membership = parseSelfCgroup(read(paths.self) ?? '');
  const limits: number[] = [];
  // A container usually sees its own cgroup as the root (cgroup namespace); outside one the
  // membership path names it. Both are looked at; missing files are skipped.
  if (read(posix.join(paths.root, 'cgroup.controllers')) !== undefined) {
    for (const dir of chain(paths.root, membership.v2 ?? '/')) {
      const text = read(posix.join(dir, 'cpu.max'));
      const cpus = text === undefined ? undefined : parseCpuMax(text);
      if (cpus !== undefined) limits.push(cpus);
    }
  }
  for (const name of V1_CPU_DIRS) {
    const mount = posix.join(paths.root, name);
    for (const dir of chain(mount, membership.v1cpu ?? '/')) {
      const quota = read(posix.join(dir, 'cpu.cfs_quota_us'));
      const period = read(posix.join(dir, 'cpu.cfs_period_us'));
      if (quota === undefined || period === undefined) continue;
      const cpus = ratio(Number(quota.trim()), Number(period.trim()));
      if (cpus !== undefined) limits.push(cpus);
    }
    if (limits.length > 0) break;
  }
  return limits.length > 0 ? Math.min(...limits) : undefined;
}

/** Whole CPUs this process may use: min(availableParallelism(), the cgroup quota rounded down), at least 1. */
export function usableCpus(paths: CgroupPaths = SYSTEM, cores: number = availableParallelism()): number {
  const quota = cgroupCpuQuota(paths);
  const limited = quota === undefined ? cores : Math.min(cores, Math.floor(quota));
  return Math.max(1, limited);
}
