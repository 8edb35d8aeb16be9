/**
 * The exporter as it runs in production: the real command (`main.js --config`) in a process of its
 * own, default settings, polling one simulated server (real clock, churn) every 15 s, scraped the
 * way a Prometheus HA pair does (two gzip scrapes every 15 s). Its peak RSS is the kernel's
 * high-water mark (VmHWM), its parts are read from /proc every quarter second and its CPU from
 * /proc/<pid>/stat: the memory figure of the issue's table is this process's peak, not the
 * stress phases' (20 back-to-back scrapers grow the serving thread's heap with in-flight
 * responses).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { startSimulator } from '@flussonic-exporter/simulator';
import { childEnv, exporterNodeFlags } from './common.js';

/** What runs: the stats shape and the size of the one simulated server. */
export interface SteadyScenario {
  readonly shape: 'flat' | 'nested';
  readonly streams: number;
  readonly sessions: number;
}

export interface SteadyFigures {
  readonly seconds: number;
  readonly intervalSeconds: number;
  /** The kernel's high-water mark of the process's RSS (VmHWM) at the end: no sampling can miss its peak. */
  readonly peakRssMb: number;
  /** The largest RSS of the samples taken every 250 ms, and its parts below. */
  readonly sampledPeakRssMb: number;
  /**
   * The sampled peak's parts (/proc/<pid>/status): anonymous memory (heaps, buffers, stacks: the
   * exporter's own) and mapped files (clean pages of the node executable and its libraries, shared
   * with every process that maps them and dropped first under memory pressure).
   */
  readonly peakRssAnonMb: number;
  readonly peakRssFileMb: number;
  /** Resident pages of the node executable itself at the end (/proc/<pid>/smaps): they grow with the Node release. */
  readonly executableMb: number;
  readonly endRssMb: number;
  /** Exporter CPU over the run / the run's length (1 = one core busy). */
  readonly cpuShare: number;
  readonly scrapes: number;
  readonly streamsExported: number;
}

/**
 * The built command (`npm run bench` builds it first): dist-bench/bench/steady.js -> dist/main.js;
 * BENCH_STEADY_MAIN=<path of another build's main.js> runs that one instead (before/after).
 */
const MAIN = process.env.BENCH_STEADY_MAIN ?? fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const INTERVAL_S = 15;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface Memory {
  readonly rssMb: number;
  /** VmHWM: the most RSS the process has had. */
  readonly highWaterMb: number;
  readonly anonMb: number;
  readonly fileMb: number;
}

/** The process's resident memory and its parts, from /proc/<pid>/status. */
export function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: RegExp) => Number(field.exec(status)?.[1] ?? 0) / 1024;
  return { rssMb: mb(/^VmRSS:\s+(\d+) kB/m), highWaterMb: mb(/^VmHWM:\s+(\d+) kB/m), anonMb: mb(/^RssAnon:\s+(\d+) kB/m), fileMb: mb(/^RssFile:\s+(\d+) kB/m) + mb(/^RssShmem:\s+(\d+) kB/m) };
}

/** The process's CPU time so far: fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name), utime and stime in clock ticks (100 Hz). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident MB of the mappings of `file` in the process (/proc/<pid>/smaps). */
function residentOf(pid: number, file: string): number {
  let kb = 0;
  let inFile = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) inFile = mapping[1] === file;
    else if (inFile && line.startsWith('Rss:')) kb += Number(/(\d+)/.exec(line)?.[1] ?? 0);
  }
  return kb / 1024;
}

export async function runSteady(scenario: SteadyScenario, seconds: number): Promise<SteadyFigures> {
  const sim = await startSimulator({ clock: 'real', churn: true, seed: 1, shape: scenario.shape, streams: scenario.streams, sessions: scenario.sessions, gpus: 2, dvrs: 3 });
  const dir = mkdtempSync(join(tmpdir(), 'flussonic-exporter-steady-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `servers:\n  - name: edge-1\n    url: ${JSON.stringify(sim.url)}\n    poll_interval: ${INTERVAL_S}s\n`);
  const port = await freePort();
  const child = spawn(process.execPath, [...exporterNodeFlags(), MAIN, '--config', config, '--web.listen-address', `127.0.0.1:${port}`, '--log-level', 'warn'], { env: childEnv(), stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  let peak: Memory = { rssMb: 0, highWaterMb: 0, anonMb: 0, fileMb: 0 };
  let last = 0;
  // From the start: the first poll (every session new) is part of the run.
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `the exporter exited (${signal ?? code}) before the run ended`));
  const sampler = setInterval(() => {
    if (exited) return;
    const now = memory(child.pid!);
    last = now.rssMb;
    if (now.rssMb > peak.rssMb) peak = now;
  }, 250);
  try {
    const started = performance.now();
    // Ready once the first poll ended (at most a poll interval and a timeout away).
    for (let i = 0; i < 600 && !exited; i++) {
      const ready = await request(`${url}/-/ready`).then(async (r) => (await r.body.dump(), r.statusCode === 200), () => false);
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (exited) throw new Error(exited);
    const cpu0 = cpuSeconds(child.pid!);
    const t0 = performance.now();
    let scrapes = 0;
    let streamsExported = 0;
    const scrape = async (count: boolean) => {
      const r = await request(`${url}/metrics`, { headers: { 'accept-encoding': count ? 'identity' : 'gzip' } });
      const body = count ? await r.body.text() : (await r.body.arrayBuffer(), '');
      scrapes++;
      if (count) streamsExported = body.match(/^flussonic_stream_alive\{/gm)?.length ?? 0;
    };
    let tick = 0;
    while (performance.now() - t0 < seconds * 1000) {
      if (exited) throw new Error(exited);
      if (tick % (INTERVAL_S * 2) === INTERVAL_S) await Promise.all([scrape(false), scrape(false)]);
      tick++;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await scrape(true);
    const cpuShare = (cpuSeconds(child.pid!) - cpu0) / ((performance.now() - t0) / 1000);
    const executableMb = residentOf(child.pid!, realpathSync(process.execPath));
    const highWaterMb = memory(child.pid!).highWaterMb;
    console.log(
      `steady: ${scenario.streams.toLocaleString('en')} streams / ${scenario.sessions.toLocaleString('en')} sessions polled every ${INTERVAL_S} s by \`main.js --config\` ` +
        `(ready after ${((t0 - started) / 1000).toFixed(1)} s), then ${scrapes} scrapes over ${seconds} s: peak RSS ${Math.round(highWaterMb)} MB ` +
        `(the kernel's high-water mark; the largest sample ${Math.round(peak.rssMb)} MB: anonymous ${Math.round(peak.anonMb)}, mapped files ${Math.round(peak.fileMb)}; ` +
        `the node executable's own pages ${Math.round(executableMb)} MB at the end), ` +
        `at the end ${Math.round(last)} MB; CPU ${(cpuShare * 100).toFixed(1)}% of a core; ${streamsExported.toLocaleString('en')} streams exported`,
    );
    return {
      seconds,
      intervalSeconds: INTERVAL_S,
      peakRssMb: highWaterMb,
      sampledPeakRssMb: peak.rssMb,
      peakRssAnonMb: peak.anonMb,
      peakRssFileMb: peak.fileMb,
      executableMb,
      endRssMb: last,
      cpuShare,
      scrapes,
      streamsExported,
    };
  } finally {
    clearInterval(sampler);
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    rmSync(dir, { recursive: true, force: true });
    await sim.close();
  }
}
