/**
 * Compression work read from V8 CPU profiles (`--cpu-prof`, one file per thread): the sampled time
 * whose stack passes through node:zlib on the compressing side (deflate, gzip, crc32), not
 * through inflate. Synchronous zlib runs on the calling thread and is sampled there; zlib's async
 * API runs on libuv's pool, which no profile sees.
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
  /** Sampled ms in compression, all threads. */
  readonly ms: number;
  /** Sampled ms of the whole profiles (every thread), for scale. */
  readonly sampledMs: number;
  readonly profiles: number;
}

const DECOMPRESS = /inflate|gunzip|unzip|decompress/i;

/** The compression time in every .cpuprofile of `dir`. */
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
    // Per node: does its stack pass through node:zlib, on the compressing side?
    const compressing = new Map<number, boolean>();
    const isCompressing = (id: number): boolean => {
      const known = compressing.get(id);
      if (known !== undefined) return known;
      let zlib = false;
      let inflate = false;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at)!.callFrame;
        if (frame.url === 'node:zlib' || frame.url.endsWith('/zlib.js')) zlib = true;
        if (DECOMPRESS.test(frame.functionName)) inflate = true;
      }
      const answer = zlib && !inflate;
      compressing.set(id, answer);
      return answer;
    };
    profile.samples.forEach((id, i) => {
      const us = profile.timeDeltas[i] ?? 0;
      sampledMs += us / 1000;
      if (isCompressing(id)) ms += us / 1000;
    });
  }
  return { ms, sampledMs, profiles: files.length };
}
