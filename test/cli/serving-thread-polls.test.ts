/**
 * `workers: 0`: the command polls on its serving thread (src/threads/in-process.ts, loaded only
 * then) and exports what a worker thread would, with fewer threads; with several targets it says
 * once that they all poll there. The real command against the simulator (frozen clock, no churn).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { ConfigDir } from '../config/config-files.js';
import { ensureBuilt, ExporterProcess, killAll } from './exporter-process.js';

let sim: RunningSimulator;
const dir = new ConfigDir();
beforeAll(async () => {
  ensureBuilt();
  sim = await startSimulator({ streams: 12, sessions: 30, clock: 'manual', churn: false, seed: 5, shape: 'nested' });
}, 240_000);
afterAll(async () => {
  await killAll();
  await sim?.close();
  dir.cleanup();
});

interface Run {
  /** Every upstream-derived series (name and labels), sorted; the values are left out. */
  readonly series: string[];
  /** Threads of the process (Linux), or undefined. */
  readonly threads: number | undefined;
}

/** The command with `workers` and one server entry per name, all the simulator. */
function start(workers: number, names: readonly string[] = ['edge']): ExporterProcess {
  const servers = names.map((name) => `  - name: ${name}\n    url: ${sim.url}\n`).join('');
  const config = dir.write(`workers-${workers}-${names.length}.yaml`, `listen_address: 127.0.0.1:0\nworkers: ${workers}\npoll_interval: 1h\nservers:\n${servers}`);
  return new ExporterProcess(['--config', config]);
}

const SEVERAL = /^workers: 0 polls every target on the serving thread/;

/** Starts the command with `workers`, waits for a good poll of the simulator, and reads it. */
async function run(workers: number): Promise<Run> {
  const p = start(workers);
  try {
    const url = `${await p.baseUrl()}/metrics`;
    let text = '';
    for (let i = 0; i < 100 && !/^flussonic_up\{server="edge"\} 1$/m.test(text); i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      text = await (await fetch(url)).text();
    }
    expect(text).toMatch(/^flussonic_up\{server="edge"\} 1$/m);
    const series = text
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#') && !/^(flussonic_exporter_|process_|nodejs_)/.test(line))
      .map((line) => line.slice(0, line.lastIndexOf(' ')))
      .sort();
    const status = `/proc/${p.child.pid}/status`;
    const threads = existsSync(status) ? Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(status, 'utf8'))?.[1]) : undefined;
    expect(p.logs.filter((l) => SEVERAL.test(l.msg ?? ''))).toEqual([]);
    return { series, threads };
  } finally {
    p.child.kill('SIGTERM');
    await p.exitWithin(10_000);
  }
}

describe('workers: 0', () => {
  it('polls on the serving thread: the same series as a worker thread exports, one thread fewer', async () => {
    const here = await run(0);
    const worker = await run(1);
    expect(here.series.length).toBeGreaterThan(100);
    expect(here.series.some((s) => s.startsWith('flussonic_stream_'))).toBe(true);
    expect(here.series).toEqual(worker.series);
    if (here.threads === undefined || worker.threads === undefined) return;
    expect(here.threads).toBeLessThan(worker.threads);
  }, 60_000);

  it('says once, naming the setting, that several targets all poll on the serving thread', async () => {
    const p = start(0, ['edge-1', 'edge-2', 'edge-3']);
    try {
      const line = await p.waitForLog((l) => SEVERAL.test(l.msg ?? ''));
      expect(line).toMatchObject({ level: 40, targets: 3 });
      expect(line.msg).toMatch(/set workers to 1 or more/);
      await p.baseUrl();
      expect(p.logs.filter((l) => SEVERAL.test(l.msg ?? ''))).toHaveLength(1);
    } finally {
      p.child.kill('SIGTERM');
      await p.exitWithin(10_000);
    }
  }, 30_000);
});
