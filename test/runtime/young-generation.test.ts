/**
 * The young generation of the command's serving thread does not grow (src/young-generation.ts),
 * unless a semi-space flag was given; the flags given are found on the node command line and in
 * NODE_OPTIONS.
 */
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeFlagGiven } from '../../src/lib/node-flags.js';

const MODULE = pathToFileURL(resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/young-generation.js')).href;

/**
 * The young generation's size (MiB) in a new node process after it kept 300,000 small objects,
 * which V8 grows it for; with `load`, after importing the built module first.
 */
function youngGenerationMb(load: boolean, nodeFlags: readonly string[] = [], nodeOptions = ''): number {
  const script = `${load ? `await import(${JSON.stringify(MODULE)});` : ''}
    const v8 = await import('node:v8');
    const keep = [];
    for (let i = 0; i < 300000; i++) keep.push({ a: i, b: String(i) });
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    console.log(space.space_size / 1048576, keep.length);`;
  const out = execFileSync(process.execPath, [...nodeFlags, '--input-type=module', '-e', script], { env: { ...process.env, NODE_OPTIONS: nodeOptions }, encoding: 'utf8', timeout: 30_000 });
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

  it('is the user’s to size when a semi-space flag was given', () => {
    expect(youngGenerationMb(true, ['--semi-space-growth-factor=2'])).toBeGreaterThanOrEqual(8);
    expect(youngGenerationMb(true, [], '--max-semi-space-size=8')).toBeGreaterThanOrEqual(8);
  }, 60_000);
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
