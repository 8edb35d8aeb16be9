/**
 * Processes for the end-to-end test: the exporter in demo mode and a real Prometheus, both on
 * loopback ports, with bounded waits and a stop that always ends the process.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
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
