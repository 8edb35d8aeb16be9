/**
 * `--instructions`: the whole-poll ratio counted in instructions instead of CPU time. The exporter
 * child and the two baseline children each run under valgrind's callgrind, which counts every
 * instruction executed in the process (all threads, the JIT's code included), whatever else the
 * machine is doing.
 *
 * Both baselines of the CPU phase (bench/threads.ts) are counted: fetch() + JSON.parse, the baseline
 * of the whole-poll target, and undici + JSON.parse. These counts are a reading beside the targets,
 * not one of them: the target is CPU. A count misses what a program loses to stalls, and the two
 * baselines differ there: over the same walks (flat, 10k streams / 100k sessions) fetch() ran 30%
 * more instructions than undici but took 50% more user CPU time (user 210 against 140 ms a poll,
 * system 24 against 34 ms).
 *
 * Why: on this machine (2 vCPUs under KVM) the baseline's CPU time for the same requests moved
 * between 136 and 262 ms from run to run, the exporter's between 327 and 460, and not together;
 * the CPU ratio (bench/threads.ts) so moved between 1.5 and 2.9 with the code unchanged. A count
 * of instructions does not measure time (a cache miss costs no instruction, the kernel's work is
 * not counted), and it is not fixed either: V8 sizes its heaps by the speed it measures, so GCs
 * fall differently from run to run (a nested baseline read 1,887-2,268 M in three runs). But the
 * flat exporter read 2,853-2,893 M in three runs, so a change of a few percent shows.
 *
 * Each round: the simulator's clock moves 15 s (churn), then the exporter polls every target once
 * and each baseline fetches the same pages, each between a zeroing and a dump of its counters
 * (callgrind_control -z / -d), so a round counts that round's work only. The first `warmup` rounds
 * are not counted (JIT tiers, heap sizing). Under valgrind a poll of 10k streams / 100k sessions
 * takes about 25 s of wall time, so the exporter is given a poll interval of 10 minutes: its
 * request timeout (interval - 2 s) must not end a poll that is only slow because it is counted.
 *
 * The floor: after the last round the exporter's exposition is read once from its /metrics, and a
 * fourth child compresses it with the exporter's own code, counted the same way. The baseline plus
 * that count is what an exporter of this output would spend if collecting and writing its samples
 * cost nothing; its ratio to the baseline is the lowest whole-poll ratio that output allows.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningSimulator } from '@flussonic-exporter/simulator';
import { exporterNodeFlags, type LoopCounts } from './common.js';
import { median } from './child-io.js';
import { Child } from './child.js';
import type { HeldText } from './gzip-floor-child.js';

export interface InstructionFigures {
  /** Millions of instructions per whole poll (all threads of the exporter process), median. */
  readonly exporterM: number;
  /** Millions of instructions of the same requests with undici + JSON.parse, median. */
  readonly undiciM: number;
  /** exporterM / undiciM. */
  readonly ratio: number;
  /** The same requests with fetch() + JSON.parse, median, and exporterM / fetchM. */
  readonly fetchM: number;
  readonly fetchRatio: number;
  /**
   * Millions of instructions to gzip the exporter's exposition (its text after the last round,
   * `textBytes`) with the exporter's own code, median (bench/gzip-floor-child.ts).
   */
  readonly gzipM: number;
  readonly textBytes: number;
  /**
   * (undiciM + gzipM) / undiciM: the ratio an exporter of this output would have if collecting and
   * writing its samples cost nothing. A target below it cannot be met by making the exporter faster.
   */
  readonly floorRatio: number;
  /** Each counted round, in millions: the spread says whether the warm-up was long enough. */
  readonly perRound: { readonly exporter: readonly number[]; readonly undici: readonly number[]; readonly fetch: readonly number[]; readonly gzip: readonly number[] };
  readonly rounds: number;
  readonly warmup: number;
}

/** Why the phase cannot run here, or undefined when valgrind and callgrind_control are there. */
export function instructionsUnavailable(): string | undefined {
  for (const tool of ['valgrind', 'callgrind_control']) {
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' });
    } catch {
      return `${tool} not found (Debian: apt-get install valgrind)`;
    }
  }
  return undefined;
}

/** The interval that keeps a poll under valgrind within its timeout (see the file header). */
const COUNTED_INTERVAL_MS = 600_000;
/** Compressions of the held text not counted: its first one runs the JavaScript around zlib unoptimised. */
const GZIP_WARMUP_ROUNDS = 2;

export async function measureInstructions(
  sim: RunningSimulator,
  /** The baseline's walks, asked for each round (see measureWholePoll()). */
  walks: () => readonly unknown[],
  rounds: number,
  warmup: number,
): Promise<InstructionFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'flussonic-bench-callgrind-'));
  const children: Child[] = [];
  const start = async (script: string, nodeFlags: readonly string[] = []) => {
    const child = await Child.start(script, ['--tool=callgrind', '-q', `--callgrind-out-file=${join(dir, 'cg.%p')}`, process.execPath, ...nodeFlags], 'valgrind');
    children.push(child);
    return child;
  };
  try {
    const exporter = await start('exporter-child.js', exporterNodeFlags());
    // Each baseline in a process of its own, as in the CPU phase: neither meets the other's heap.
    const baselines = { undici: await start('baseline-child.js'), fetch: await start('baseline-child.js') };
    const { port } = await exporter.request<{ port: number }>({ type: 'init-serve', url: sim.url, intervalMs: COUNTED_INTERVAL_MS });
    const perRound = { exporter: [] as number[], undici: [] as number[], fetch: [] as number[], gzip: [] as number[] };
    for (let round = 0; round < warmup + rounds; round++) {
      const counted = round >= warmup;
      sim.advance(15_000);
      const exporterIr = await countedWork(exporter, dir, () => exporter.request({ type: 'poll-all' }));
      if (counted) perRound.exporter.push(exporterIr / 1e6);
      for (const client of ['undici', 'fetch'] as const) {
        const baseline = baselines[client];
        const baselineIr = await countedWork(baseline, dir, async () => {
          for (const walk of walks()) await baseline.request({ ...(walk as object), client });
        });
        if (counted) perRound[client].push(baselineIr / 1e6);
      }
    }
    const loops = await exporter.request<LoopCounts>({ type: 'loop-counts' });
    if (loops.polls !== warmup + rounds) throw new Error(`the exporter logged ${loops.polls} finished polls under valgrind, not ${warmup + rounds}`);
    if (loops.failed > 0) throw new Error(`${loops.failed} of ${loops.polls} polls under valgrind failed: their count would not be a whole poll's`);
    // After the counted rounds, so that serving the text (inflated again, under valgrind) is in no round.
    const file = join(dir, 'exposition.txt');
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    if (res.status !== 200) throw new Error(`the exporter's /metrics answered HTTP ${res.status}`);
    writeFileSync(file, new Uint8Array(await res.arrayBuffer()));
    const floor = await start('gzip-floor-child.js');
    const heldText = await floor.request<HeldText>({ type: 'hold', file });
    for (let round = 0; round < GZIP_WARMUP_ROUNDS + rounds; round++) {
      const gzipIr = await countedWork(floor, dir, () => floor.request({ type: 'deflate' }));
      if (round >= GZIP_WARMUP_ROUNDS) perRound.gzip.push(gzipIr / 1e6);
    }
    const exporterM = median(perRound.exporter);
    const undiciM = median(perRound.undici);
    const fetchM = median(perRound.fetch);
    const gzipM = median(perRound.gzip);
    return {
      exporterM,
      undiciM,
      ratio: exporterM / undiciM,
      fetchM,
      fetchRatio: exporterM / fetchM,
      gzipM,
      textBytes: heldText.bytes,
      floorRatio: (undiciM + gzipM) / undiciM,
      perRound,
      rounds,
      warmup,
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The instructions `child` executes during `work`: its counters zeroed before, dumped after. Each
 * dump is deleted once read, so the child's only numbered dump in `dir` is the one just made.
 */
async function countedWork(child: Child, dir: string, work: () => Promise<unknown>): Promise<number> {
  execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
  await work();
  execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
  const dumps = readdirSync(dir).filter((f) => f.startsWith(`cg.${child.pid}.`));
  if (dumps.length !== 1) throw new Error(`callgrind_control -d ${child.pid} wrote ${dumps.length} dumps, not one`);
  const file = join(dir, dumps[0]!);
  const total = /^totals: (\d+)$/m.exec(readFileSync(file, 'utf8'));
  rmSync(file); // about 2 MB each
  if (!total) throw new Error(`no totals line in the callgrind dump ${dumps[0]}`);
  return Number(total[1]);
}
