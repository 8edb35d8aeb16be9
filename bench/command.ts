/**
 * The exporter command as a user runs it (`node dist/main.js --config <file>`) in a process of its
 * own, for the cycle phase (bench/cycle.ts): the config names one server and its poll interval,
 * every other setting is the default. Its CPU is read from /proc, never from inside: every thread,
 * and nothing of the process that measures it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { childEnv, exporterNodeFlags, exporterSettings } from './common.js';
import { freePort, memory } from './steady.js';

/** The built command; BENCH_STEADY_MAIN=<another build's main.js> runs that one instead (before/after), as for the steady phase. */
const MAIN = process.env.BENCH_STEADY_MAIN ?? fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** The CPU a process has used so far, read two ways. */
export interface CpuReading {
  /** utime + stime of /proc/<pid>/stat (every thread, those ended too), in ms: clock ticks, 10 ms steps. */
  readonly statMs: number;
  /** The sum of /proc/<pid>/task/<tid>/schedstat's run time over the live threads, in ms (nanosecond counts). */
  readonly schedMs: number;
  /** The live threads' ids, to tell whether `schedMs` of two readings covers the same threads. */
  readonly tids: string;
}

export function readCpu(pid: number): CpuReading {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const statMs = (Number(fields[11]) + Number(fields[12])) * 10;
  let schedNs = 0;
  const tids = readdirSync(`/proc/${pid}/task`).sort();
  for (const tid of tids) {
    try {
      schedNs += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read: the tid lists of the two readings differ.
    }
  }
  return { statMs, schedMs: schedNs / 1e6, tids: tids.join(',') };
}

/**
 * CPU between two readings: the nanosecond counts when the same threads lived at both, else the
 * ticks of /proc/<pid>/stat (which keep what ended threads used).
 */
export function cpuBetween(a: CpuReading, b: CpuReading): { readonly ms: number; readonly source: 'schedstat' | 'stat' } {
  return a.tids === b.tids ? { ms: b.schedMs - a.schedMs, source: 'schedstat' } : { ms: b.statMs - a.statMs, source: 'stat' };
}

export interface RunningCommand {
  readonly pid: number;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Threads of the process now. */
  threads(): number;
  /** VmHWM: the most RSS the process has had, MB. */
  peakRssMb(): number;
  /** SIGTERM, and resolves once the process exited (its --cpu-prof files written). */
  stop(): Promise<void>;
  /** Rewrites the config with another poll interval and reloads it (SIGHUP), as a user would. */
  setPollInterval(intervalMs: number): void;
}

/** Starts the command on a config of one server polled every `intervalMs`; resolves once it is ready (its first poll ended). */
export async function startCommand(serverUrl: string, intervalMs: number, nodeFlags: readonly string[] = []): Promise<RunningCommand> {
  const dir = mkdtempSync(join(tmpdir(), 'flussonic-exporter-cycle-'));
  const config = join(dir, 'config.yaml');
  const writeConfig = (ms: number) => writeFileSync(config, `${exporterSettings()}servers:\n  - name: edge-1\n    url: ${JSON.stringify(serverUrl)}\n    poll_interval: ${ms}ms\n`);
  writeConfig(intervalMs);
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [...exporterNodeFlags(), ...nodeFlags, MAIN, '--config', config, '--web.listen-address', `127.0.0.1:${port}`], {
    env: childEnv(),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited: string | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = `the exporter exited (${signal ?? code})`;
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exit;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 1200 && !exited; i++) {
      const ready = await request(`${url}/-/ready`).then(async (r) => (await r.body.dump(), r.statusCode === 200), () => false);
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (i === 1199) throw new Error(`the exporter was not ready within 120 s (${url}/-/ready)`);
    }
    if (exited) throw new Error(`${exited} before it was ready`);
  } catch (error) {
    await stop();
    throw error;
  }
  const pid = child.pid!;
  return {
    pid,
    url,
    threads: () => readdirSync(`/proc/${pid}/task`).length,
    peakRssMb: () => memory(pid).highWaterMb,
    stop,
    setPollInterval: (ms) => {
      writeConfig(ms);
      process.kill(pid, 'SIGHUP');
    },
  };
}
