/**
 * The floor of the cycle phase (bench/cycle.ts), in a process of its own: what reading a poll's
 * input once and compressing its output once costs, with nothing else.
 *  - `replay`: the exact requests of one poll of the exporter (path and query as the simulator
 *    logged them: same `limit`, `select`, cursors, in the same order), fetched with undici's
 *    Pool.request on keep-alive connections and JSON.parse'd.
 *  - `gzip`: the exposition text the exporter served that poll (read from a file before the clock
 *    starts), gzip'd once as a whole at the exporter's level.
 * CPU is this process's (every thread) around the work alone.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { answerRequests, cpuMs } from './child-io.js';
import { destroyPools, getPage, poolFor } from './undici-pages.js';

export type ReplayRequest =
  | { readonly type: 'replay'; readonly origin: string; readonly paths: readonly string[] }
  | { readonly type: 'gzip'; readonly file: string; readonly level: number }
  | { readonly type: 'exit' };

export interface Replayed {
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly requests: number;
  readonly bytes: number;
}

export interface Gzipped {
  readonly cpuMs: number;
  readonly textBytes: number;
  readonly gzipBytes: number;
}

async function replay(origin: string, paths: readonly string[]): Promise<Replayed> {
  const pool = poolFor(origin);
  const cpu0 = cpuMs();
  const t0 = performance.now();
  let bytes = 0;
  for (const path of paths) {
    bytes += (await getPage(pool, path)).bytes;
  }
  return { cpuMs: cpuMs() - cpu0, wallMs: performance.now() - t0, requests: paths.length, bytes };
}

function gzip(file: string, level: number): Gzipped {
  const text = readFileSync(file);
  const cpu0 = cpuMs();
  const gzipBytes = gzipSync(text, { level }).length;
  return { cpuMs: cpuMs() - cpu0, textBytes: text.length, gzipBytes };
}

async function handle(message: ReplayRequest): Promise<unknown> {
  switch (message.type) {
    case 'replay':
      return replay(message.origin, message.paths);
    case 'gzip':
      return gzip(message.file, message.level);
    case 'exit':
      await destroyPools();
      setImmediate(() => process.exit(0));
      return { ok: true };
  }
}

answerRequests(handle);
