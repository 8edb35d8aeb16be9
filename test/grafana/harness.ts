/**
 * Processes for the end-to-end test: the exporter in demo mode and a real Prometheus, both on
 * loopback ports, with bounded waits and a stop that always ends the process.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { REPO_ROOT } from '../helpers/shared.js';

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns a value (not undefined), or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  const detail = lastError instanceof Error ? `: ${lastError.message}` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
}

/** A child process with the tail of its output kept for error messages. */
export interface Spawned {
  readonly name: string;
  readonly child: ChildProcess;
  output(): string;
}

export function spawnLogged(name: string, command: string, args: readonly string[]): Spawned {
  const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { name, child, output: () => tail };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export async function stopProcess(p: Spawned | undefined, graceMs = 5000): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => p.child.once('exit', () => resolve()));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Whether `node dist/main.js --demo` can run here, or why not. Demo mode comes from branch
 * core-config (main.ts) with the runtime, collectors and simulator merged.
 */
export function demoMode(): { readonly ok: true; readonly main: string } | { readonly ok: false; readonly reason: string } {
  const src = join(REPO_ROOT, 'src', 'main.ts');
  const main = join(REPO_ROOT, 'dist', 'main.js');
  if (!existsSync(src)) return { ok: false, reason: 'demo mode is missing: src/main.ts does not exist yet (branch core-config)' };
  if (!existsSync(main)) return { ok: false, reason: 'dist/main.js is missing: run `npm run build` first (npm test does)' };
  const help = spawnSync(process.execPath, [main, '--help'], { encoding: 'utf8', timeout: 15_000 });
  if (!`${help.stdout}${help.stderr}`.includes('--demo')) {
    return { ok: false, reason: 'demo mode is missing: `node dist/main.js --help` does not offer --demo' };
  }
  if (!readFileSync(src, 'utf8').includes('demo')) return { ok: false, reason: 'demo mode is missing: src/main.ts does not start it' };
  return { ok: true, main };
}

// ---------------------------------------------------------------------------------------------
// Prometheus HTTP API

export interface PromResponse<T> {
  status: 'success' | 'error';
  data: T;
  errorType?: string;
  error?: string;
}

export type QueryData =
  | { resultType: 'vector'; result: { metric: Record<string, string>; value: [number, string] }[] }
  | { resultType: 'matrix'; result: { metric: Record<string, string>; values: [number, string][] }[] }
  | { resultType: 'scalar' | 'string'; result: [number, string] };

export class PrometheusApi {
  constructor(readonly baseUrl: string) {}

  async get<T>(path: string, params: Record<string, string | string[]> = {}): Promise<PromResponse<T>> {
    const url = new URL(path, this.baseUrl);
    for (const [key, value] of Object.entries(params)) {
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, v);
    }
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    return (await response.json()) as PromResponse<T>;
  }

  async query(expr: string): Promise<PromResponse<QueryData>> {
    return this.get<QueryData>('/api/v1/query', { query: expr });
  }

  /** The values of a label over the series a selector matches (Grafana's label_values()). */
  async labelValues(selector: string, label: string): Promise<string[]> {
    const r = await this.get<string[]>(`/api/v1/label/${label}/values`, { 'match[]': selector });
    if (r.status !== 'success') throw new Error(`label_values(${selector}, ${label}): ${r.error}`);
    return [...r.data].sort();
  }
}

/** Number of series (or 1 for a scalar) a query returned. */
export function resultSize(data: QueryData): number {
  if (data.resultType === 'scalar' || data.resultType === 'string') return 1;
  return data.result.length;
}

// ---------------------------------------------------------------------------------------------
// The demo exporter scraped by a real Prometheus

export interface DemoStack {
  readonly api: PrometheusApi;
  stop(): Promise<void>;
}

/**
 * `node dist/main.js --demo --demo-shape SHAPE [demoArgs]` and a Prometheus that scrapes it every
 * second as job `job`, with `ruleFiles` (a glob) loaded; both on free loopback ports, in a temporary
 * directory that stop() removes. Resolves once both answer; on a failure it stops what it started.
 */
export async function startDemoStack(main: string, prometheusPath: string, shape: string, job: string, ruleFiles: string, demoArgs: readonly string[] = []): Promise<DemoStack> {
  const dir = mkdtempSync(join(tmpdir(), `flussonic-grafana-e2e-${shape}-`));
  let exporter: Spawned | undefined;
  let prometheus: Spawned | undefined;
  const stop = async (): Promise<void> => {
    await stopProcess(prometheus);
    await stopProcess(exporter);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const exporterPort = await freePort();
    const args = [main, '--demo', ...demoArgs, '--demo-shape', shape, '--listen-address', `127.0.0.1:${exporterPort}`, '--log-level', 'warn'];
    exporter = spawnLogged(`exporter (${shape})`, process.execPath, args);
    const ex = exporter;
    await waitFor(`the ${shape} demo exporter to serve flussonic_up`, 20_000, async () => {
      if (ex.child.exitCode !== null) throw new Error(`the exporter exited: ${ex.output()}`);
      const r = await fetch(`http://127.0.0.1:${exporterPort}/metrics`, { signal: AbortSignal.timeout(2000) });
      const text = await r.text();
      return r.ok && /^flussonic_up\{/m.test(text) ? true : undefined;
    });

    const prometheusPort = await freePort();
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: [ruleFiles],
      scrape_configs: [
        {
          job_name: job,
          static_configs: [{ targets: [`127.0.0.1:${exporterPort}`] }],
          // The stream group relabelling grafana/README.md shows: cameras in a group, the rest "default".
          metric_relabel_configs: [{ source_labels: ['stream'], regex: 'cam/.*', target_label: 'stream_group', replacement: 'cameras' }],
        },
      ],
    };
    writeFileSync(join(dir, 'prometheus.yml'), stringifyYaml(config));
    mkdirSync(join(dir, 'data'));
    prometheus = spawnLogged(`prometheus (${shape})`, prometheusPath, [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
      '--log.level=warn',
    ]);
    const prom = prometheus;
    const api = new PrometheusApi(`http://127.0.0.1:${prometheusPort}`);
    await waitFor('Prometheus to be ready', 20_000, async () => {
      if (prom.child.exitCode !== null) throw new Error(`prometheus exited: ${prom.output()}`);
      const r = await fetch(`${api.baseUrl}/-/ready`, { signal: AbortSignal.timeout(2000) });
      return r.ok ? true : undefined;
    });
    return { api, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Waits until Prometheus has scraped the demo `scrapes` times, evaluated the recording rules, and
 * holds the Catena operations log (its first poll reads a day of history, the slowest of the demo's).
 */
export async function waitForScrapesAndRules(api: PrometheusApi, job: string, scrapes: number): Promise<void> {
  await waitFor(`${scrapes} scrapes of the exporter, the recording rules evaluated and the operations log read`, 30_000, async () => {
    const count = await api.query(`count_over_time(up{job="${job}"}[1m])`);
    const recorded = await api.query('job_server:flussonic_streams:count');
    const operations = await api.query(`flussonic_catena_operations_total{job="${job}"}`);
    if (count.status !== 'success' || recorded.status !== 'success' || operations.status !== 'success') return undefined;
    const n = count.data.resultType === 'vector' ? Number(count.data.result[0]?.value[1] ?? 0) : 0;
    return n >= scrapes && resultSize(recorded.data) > 0 && resultSize(operations.data) > 0 ? true : undefined;
  });
}
