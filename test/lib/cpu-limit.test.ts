import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cgroupCpuQuota, parseCpuMax, parseSelfCgroup, usableCpus } from '../../src/lib/cpu-limit.js';

const fixture = (name: string) => {
  const root = fileURLToPath(new URL(`../fixtures/cgroup/${name}`, import.meta.url));
  return { root, self: `${root}/self` };
};

describe('the CPUs the process may use', () => {
  it('reads a cgroup v2 cpu.max quota', () => {
    expect(cgroupCpuQuota(fixture('v2-limited'))).toBe(2);
    expect(usableCpus(fixture('v2-limited'), 16)).toBe(2);
  });

  it('takes the smallest quota of the cgroup and its parents (v2)', () => {
    expect(cgroupCpuQuota(fixture('v2-nested'))).toBe(3);
    expect(usableCpus(fixture('v2-nested'), 64)).toBe(3);
  });

  it('rounds a fractional quota down, never below one', () => {
    expect(usableCpus(fixture('v2-fraction'), 8)).toBe(1);
    expect(usableCpus(fixture('v1-limited'), 8)).toBe(1); // 0.5 CPU
  });

  it('reads a cgroup v1 CFS quota', () => {
    expect(cgroupCpuQuota(fixture('v1-limited'))).toBe(0.5);
  });

  it('keeps the cores when there is no quota', () => {
    expect(cgroupCpuQuota(fixture('v2-unlimited'))).toBeUndefined();
    expect(cgroupCpuQuota(fixture('v1-unlimited'))).toBeUndefined();
    expect(cgroupCpuQuota(fixture('none'))).toBeUndefined();
    expect(usableCpus(fixture('v2-unlimited'), 6)).toBe(6);
    expect(usableCpus(fixture('none'), 4)).toBe(4);
  });

  it('never goes above the cores', () => {
    expect(usableCpus(fixture('v2-nested'), 2)).toBe(2);
  });

  it('treats malformed files as no limit', () => {
    expect(parseCpuMax('')).toBeUndefined();
    expect(parseCpuMax('max 100000')).toBeUndefined();
    expect(parseCpuMax('abc 100000')).toBeUndefined();
    expect(parseCpuMax('100000 0')).toBeUndefined();
    expect(parseCpuMax('250000 100000\n')).toBe(2.5);
  });

  it('parses /proc/self/cgroup for v2 and the v1 cpu controller', () => {
    expect(parseSelfCgroup('12:memory:/a\n3:cpu,cpuacct:/b/c\n0::/d\n')).toEqual({ v1cpu: '/b/c', v2: '/d' });
    expect(parseSelfCgroup('garbage\n')).toEqual({});
  });
});
