/**
 * The young generation of the command's serving thread does not grow (src/heap-flags.ts),
 * and a poll worker's starts at its full size (src/threads/channels.ts), unless a semi-space flag
 * was given; no thread pretenures by allocation site, unless a pretenuring flag was given; the
 * flags given are found on the node command line and in NODE_OPTIONS.
 */
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeFlagGiven } from '../../src/lib/node-flags.js';
import { WORKER_SEMI_SPACE_MB } from '../../src/threads/channels.js';

const dist = (file: string) => pathToFileURL(resolve(dirname(fileURLToPath(import.meta.url)), '../../dist', file)).href;
const MODULE = dist('heap-flags.js');
const CHANNELS = dist('threads/channels.js');

/** Script text: the new space's size (MiB) of the heap of the thread that runs it. */
const NEW_SPACE_MB = `process.getBuiltinModule('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576`;

/**
 * The young generation's size (MiB) in a new node process after it kept 300,000 small objects,
 * which V8 grows it for; with `load`, after importing the built module first.
 */
function youngGenerationMb(load: boolean, nodeFlags: readonly string[] = [], nodeOptions = ''): number {
  const script = `${load ? `await import(${JSON.stringify(MODULE)});` : ''}
    const keep = [];
    for (let i = 0; i < 300000; i++) keep.push({ a: i, b: String(i) });
    console.log(${NEW_SPACE_MB}, keep.length);`;
  const out = execFileSync(process.execPath, [...nodeFlags, '--input-type=module', '-e', script], { env: { ...process.env, NODE_OPTIONS: nodeOptions }, encoding: 'utf8', timeout: 30_000 });
  const [mb, kept] = out.trim().split(' ').map(Number);
  expect(kept).toBe(300_000);
  return mb!;
}

/**
 * The new space (MiB) of a worker thread started under the pool's limits, as it starts, in a new
 * node process that loaded the command's first module; with `full`, after
 * startWorkerYoungGenerationsFull().
 */
function workerNewSpaceMb(full: boolean, nodeFlags: readonly string[] = []): number {
  const script = `await import(${JSON.stringify(MODULE)});
    const channels = await import(${JSON.stringify(CHANNELS)});
    const { Worker } = await import('node:worker_threads');
    if (${full}) channels.startWorkerYoungGenerationsFull();
    const worker = new Worker(\`process.getBuiltinModule('node:worker_threads').parentPort.postMessage(${NEW_SPACE_MB})\`, { eval: true, resourceLimits: channels.workerResourceLimits() });
    worker.once('message', (mb) => console.log(mb));`;
  return Number(execFileSync(process.execPath, [...nodeFlags, '--input-type=module', '-e', script], { env: { ...process.env, NODE_OPTIONS: '' }, encoding: 'utf8', timeout: 30_000 }));
}

/**
 * The serving thread's new space (MiB) after it kept 300,000 small objects beside a running worker
 * thread, in a new node process that loaded the command's first module: a worker started by the
 * pool's channels (`pool`), or a plain one.
 */
function servingBesideWorkerMb(pool: boolean): number {
  const entry = `data:text/javascript,${encodeURIComponent("import { parentPort } from 'node:worker_threads'; parentPort.postMessage('up');")}`;
  const script = `await import(${JSON.stringify(MODULE)});
    const { threadChannels } = await import(${JSON.stringify(CHANNELS)});
    const { Worker } = await import('node:worker_threads');
    const entry = new URL(${JSON.stringify(entry)});
    let end;
    if (${pool}) {
      const channel = await new Promise((resolve) => { const c = threadChannels(entry, {})(0, { message: () => resolve(c), exit: () => {} }); });
      end = () => channel.terminate();
    } else {
      const worker = new Worker(entry);
      await new Promise((resolve) => worker.once('message', resolve));
      end = () => worker.terminate();
    }
    const keep = [];
    for (let i = 0; i < 300000; i++) keep.push({ a: i, b: String(i) });
    console.log(${NEW_SPACE_MB}, keep.length);
    await end();`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, NODE_OPTIONS: '' }, encoding: 'utf8', timeout: 30_000 });
  const [mb, kept] = out.trim().split(' ').map(Number);
  expect(kept).toBe(300_000);
  return mb!;
}

describe('young generation', () => {
  it('stays at its first size in a process that loaded the module, and grows without it', () => {
    const without = youngGenerationMb(false);
    const with_ = youngGenerationMb(true);
    expect(without).toBeGreaterThanOrEqual(8);
    expect(with_).toBeLessThanOrEqual(4);
  }, 60_000);

  it('stays at its first size beside the pool’s workers, which a plain worker’s start undoes', () => {
    expect(servingBesideWorkerMb(false)).toBeGreaterThanOrEqual(8);
    expect(servingBesideWorkerMb(true)).toBeLessThanOrEqual(4);
  }, 60_000);

  it('of a poll worker starts at its full size', () => {
    expect(workerNewSpaceMb(false)).toBeLessThan(WORKER_SEMI_SPACE_MB);
    expect(workerNewSpaceMb(true)).toBeGreaterThanOrEqual(WORKER_SEMI_SPACE_MB);
  }, 60_000);

  it('is the user’s to size when a semi-space flag was given', () => {
    expect(workerNewSpaceMb(true, ['--semi-space-growth-factor=2'])).toBeLessThan(WORKER_SEMI_SPACE_MB);
    expect(youngGenerationMb(true, ['--semi-space-growth-factor=2'])).toBeGreaterThanOrEqual(8);
    expect(youngGenerationMb(true, [], '--max-semi-space-size=8')).toBeGreaterThanOrEqual(8);
  }, 60_000);
});

/**
 * V8's pretenuring decisions (`--trace-pretenuring-statistics` prints one line per allocation site
 * it weighs) in a new node process whose serving thread and a worker thread started after it each
 * keep 2,000,000 objects made at one site; with `load`, after importing the built module first.
 */
function pretenuringDecisions(load: boolean, nodeFlags: readonly string[] = []): number {
  const keep = `const keep = []; const make = (i) => ({ a: i, b: i + 1 }); for (let i = 0; i < 2000000; i++) keep.push(make(i));`;
  const script = `${load ? `await import(${JSON.stringify(MODULE)});` : ''}
    const { Worker } = await import('node:worker_threads');
    const worker = new Worker(${JSON.stringify(`${keep} process.getBuiltinModule('node:worker_threads').parentPort.postMessage(keep.length);`)}, { eval: true });
    await new Promise((resolve) => worker.once('message', resolve));
    ${keep}
    await worker.terminate();`;
  const out = execFileSync(process.execPath, ['--trace-pretenuring-statistics', ...nodeFlags, '--input-type=module', '-e', script], { env: { ...process.env, NODE_OPTIONS: '' }, encoding: 'utf8', timeout: 30_000 });
  return out.split('\n').filter((line) => line.includes('pretenuring: AllocationSite')).length;
}

describe('allocation-site pretenuring', () => {
  const baseline = pretenuringDecisions(false);

  it.skipIf(baseline === 0)('is off in every thread of a process that loaded the module', () => {
    expect(pretenuringDecisions(true)).toBe(0);
  }, 60_000);

  it.skipIf(baseline === 0)('is the user’s when a pretenuring flag was given', () => {
    expect(pretenuringDecisions(true, ['--allocation-site-pretenuring'])).toBeGreaterThan(0);
  }, 60_000);

  // A V8 that prints no statistics leaves nothing to compare with (the tests above skip).
  if (baseline === 0) console.log('allocation-site pretenuring: this node prints no pretenuring statistics; its tests skip');
});

describe('node flags given', () => {
  it('are found on the command line and in NODE_OPTIONS, with - or _ in their names', () => {
    expect(nodeFlagGiven('--max-old-space-size', ['--max-old-space-size=3000'], '')).toBe(true);
    expect(nodeFlagGiven('--max-old-space-size', [], '--enable-source-maps --max_old_space_size=300')).toBe(true);
    expect(nodeFlagGiven('--max-semi-space-size', ['--max-semi-space-size'], '')).toBe(true);
    expect(nodeFlagGiven('--max-old-space-size', ['--max-semi-space-size=4'], '--max-old-space-sizes=1')).toBe(false);
    expect(nodeFlagGiven('--max-old-space-size', [], '')).toBe(false);
  });
});
