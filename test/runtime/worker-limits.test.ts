/** The heap limits worker threads run under, and the crash reason when a worker runs out of heap. */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { exitReason, WORKER_OLD_GENERATION_MB, WORKER_YOUNG_GENERATION_MB, workerResourceLimits } from '../../src/threads/channels.js';

describe('worker heap limits', () => {
  it('caps the old generation unless --max-old-space-size was given, on the command line or in NODE_OPTIONS', () => {
    expect(workerResourceLimits([], '')).toEqual({ maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB });
    expect(workerResourceLimits(['--max-old-space-size=3000'], '')).toEqual({ maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB });
    expect(workerResourceLimits([], '--enable-source-maps --max_old_space_size=300')).toEqual({ maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB });
    expect(workerResourceLimits(['--max-semi-space-size=4'], '')).toHaveProperty('maxOldGenerationSizeMb', WORKER_OLD_GENERATION_MB);
  });

  it('names the flag that raises the limit when a real worker runs out of heap', async () => {
    const limits = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 };
    const worker = new Worker('const keep = []; for (;;) keep.push(new Array(1e5).fill(keep.length));', { eval: true, resourceLimits: limits });
    const [failure, code] = await new Promise<[unknown, number]>((resolve) => {
      let error: unknown;
      worker.on('error', (e) => (error = e));
      worker.on('exit', (c) => resolve([error, c]));
    });
    const reason = exitReason(failure, code, limits);
    expect(reason).toMatch(/^out of memory: the worker reached its 16 MB heap limit; give more with NODE_OPTIONS=--max-old-space-size=<MB>/);
    expect(exitReason(new Error('boom'), 1, limits)).toBe('uncaught error: boom');
    expect(exitReason(undefined, 3, limits)).toBe('exited with code 3');
  }, 30_000);
});
