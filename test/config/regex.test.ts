/**
 * Stream filter patterns are compiled by RE2's rules (re2js): linear time, no backreferences or
 * lookaround, so a pattern like `(a+)+b` cannot block the process on a long stream name, as
 * JavaScript's backtracking RegExp would. A pattern RE2 cannot take is a config error naming its
 * path and line.
 */
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compileStreamFilter, loadConfig } from '../../src/config/index.js';
import { ensureBuilt } from '../cli/exporter-process.js';
import { REPO_ROOT } from '../helpers/shared.js';
import { ConfigDir, configErrorOf } from './config-files.js';

const dir = new ConfigDir();
afterAll(() => dir.cleanup());

const server = (streams: string) => `servers:\n  - name: edge-1\n    url: http://127.0.0.1:8080\n    streams: ${streams}\n`;

/**
 * Loads a config and maps one stream through the built code in a worker thread, so that a
 * backtracking engine that never returns is terminated instead of hanging the test run. The
 * bound is a liveness limit (a backtracking engine needs hours on 64 `a`), not a speed target.
 */
function mapInWorker(configPath: string, streamName: string, limitMs: number): Promise<{ lines: number } | 'blocked'> {
  const dist = (p: string) => pathToFileURL(join(REPO_ROOT, 'dist', p)).href;
  const code = `
    import { parentPort, workerData } from 'node:worker_threads';
    const { loadConfig } = await import(${JSON.stringify(dist('config/index.js'))});
    const { mapStream } = await import(${JSON.stringify(dist('collect/streams-map.js'))});
    const { SeriesWriter } = await import(${JSON.stringify(dist('render/series.js'))});
    const config = loadConfig(workerData.configPath, {});
    parentPort.postMessage('loaded');
    const out = new SeriesWriter([['server', 'edge-1']]);
    mapStream(out, { name: workerData.streamName, stats: { alive: true } }, config.servers[0]);
    parentPort.postMessage({ lines: out.series });
  `;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), { workerData: { configPath, streamName } });
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    worker.on('message', (m: unknown) => {
      if (m === 'loaded') {
        timer = setTimeout(() => void worker.terminate().then(() => resolve('blocked')), limitMs);
        return;
      }
      clearTimeout(timer);
      void worker.terminate();
      resolve(m as { lines: number });
    });
    worker.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

describe('stream filter regexes run in linear time', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  test("include '(a+)+b' against a stream named with 64 `a` returns (and excludes it)", async () => {
    const file = dir.write('redos.yaml', server(`{ include: '(a+)+b' }`));
    const result = await mapInWorker(file, 'a'.repeat(64), 10_000);
    expect(result).toEqual({ lines: 0 });
  }, 30_000);

  test("the same pattern still matches what it should: 'aaab'", () => {
    const passes = compileStreamFilter(loadConfig(dir.write('redos.yaml', server(`{ include: '(a+)+b' }`)), {}).servers[0]!.streams);
    expect(passes('aaab')).toBe(true);
    expect(passes(`${'a'.repeat(100_000)}c`)).toBe(false);
  });
});

describe('a pattern RE2 cannot take is a config error with path and line', () => {
  test.each([
    ['backreference', '"(a)\\\\1"', /backreferences are not supported/],
    ['lookahead', '"edge-(?!test)"', /lookahead and lookbehind are not supported/],
    ['lookbehind', '"(?<=x)y"', /lookahead and lookbehind are not supported/],
    ['unbalanced', '"a)|(b"', /unexpected \)/],
    ['huge repeat', '"a{5000}"', /invalid repeat count/],
  ])('%s', (_what, pattern, message) => {
    const file = dir.write('bad.yaml', server(`\n      include: edge-.*\n      exclude: ${pattern}`));
    const error = configErrorOf(() => loadConfig(file, {}));
    expect(error.problems).toEqual([{ path: 'servers[0].streams.exclude', line: 6, message: expect.stringMatching(/^invalid regular expression: /) }]);
    expect(error.problems[0]!.message).toMatch(message);
    expect(error.message).toContain(file);
  });
});
