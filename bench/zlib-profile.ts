/**
 * Compression work read from V8 CPU profiles (`--cpu-prof`, one file per thread): the sampled time
 * whose stack passes through node:zlib, loading the module left out. A profile cannot tell deflate
 * from inflate (both run through the same wrappers), so this is compression only where the process
 * decompresses nothing: the exporter asks its upstreams for no compressed responses (bench/cycle.ts
 * checks the requests' accept-encoding). Synchronous zlib runs on the calling thread and is sampled
 * there; zlib's async API runs on libuv's pool, which no profile sees.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ZlibTime {
  /** Sampled ms in node:zlib, all threads. */
  readonly ms: number;
  /** Sampled ms of the whole profiles (every thread), for scale. */
  readonly sampledMs: number;
  readonly profiles: number;
}

/** Frames of loading a built-in module: node:zlib's own loading is no compression. */
const LOADING = new Set(['compileForInternalLoader', 'requireBuiltin', 'compileForPublicLoader']);

/** The zlib time in every .cpuprofile of `dir`. */
export function zlibTime(dir: string): ZlibTime {
  let ms = 0;
  let sampledMs = 0;
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const parent = new Map<number, number>();
    const byId = new Map<number, ProfileNode>();
    for (const node of profile.nodes) {
      byId.set(node.id, node);
      for (const child of node.children ?? []) parent.set(child, node.id);
    }
    // Per node: does its stack pass through node:zlib, other than loading it?
    const inZlib = new Map<number, boolean>();
    const isZlib = (id: number): boolean => {
      const known = inZlib.get(id);
      if (known !== undefined) return known;
      let zlib = false;
      let loading = false;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at)!.callFrame;
        if (frame.url === 'node:zlib' || frame.url.endsWith('/zlib.js')) zlib = true;
        if (LOADING.has(frame.functionName)) loading = true;
      }
      const answer = zlib && !loading;
      inZlib.set(id, answer);
      return answer;
    };
    profile.samples.forEach((id, i) => {
      const us = profile.timeDeltas[i] ?? 0;
      sampledMs += us / 1000;
      if (isZlib(id)) ms += us / 1000;
    });
  }
  return { ms, sampledMs, profiles: files.length };
}
