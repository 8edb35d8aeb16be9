/**
 * The serving thread loads only what serving needs. The compiled modules (dist/, built before the
 * tests) are walked along their static imports, the ones a module loads with itself; dynamic
 * import() loads only when it runs. The HTTP client (undici; with the clients about 5 MB of RSS)
 * and the poll runtime belong to the worker threads.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SIMULATOR_PACKAGE as SIMULATOR } from '../../src/demo.js';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist');
const STATIC_IMPORT = /^(?:import|export)\s[^;]*?\bfrom\s*['"]([^'"]+)['"]|^import\s*['"]([^'"]+)['"]/gm;

/** Every module reachable by static imports from `entry`: own files by path, packages by name. */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const walk = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('.')) walk(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:')) seen.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  walk(entry);
  return seen;
}

const own = (path: string) => resolve(DIST, path);

describe('modules of the serving thread', () => {
  it('leave out the HTTP client, the collectors runtime and the simulator, which a worker loads', () => {
    expect(existsSync(own('main.js')), 'dist/ is built by npm test before vitest').toBe(true);
    const main = staticGraph(own('main.js'));
    const worker = staticGraph(own('threads/worker.js'));
    // The walk sees what a worker loads, so it would see the same in the main thread.
    for (const m of ['undici', own('flussonic/client.js'), own('upstream/http.js'), own('threads/runtime.js'), own('poll/targets.js')]) expect(worker).toContain(m);
    expect(main).toContain('fastify');
    expect(main).toContain(own('threads/pool.js'));
    for (const m of ['undici', own('flussonic/client.js'), own('upstream/http.js'), own('catena/client.js'), own('threads/runtime.js'), own('threads/in-process.js'), own('poll/targets.js'), SIMULATOR]) {
      expect(main, `${m} is loaded with dist/main.js`).not.toContain(m);
    }
    // The name the walk must not meet is the one the demo loads on demand.
    expect(readFileSync(own('demo.js'), 'utf8')).toContain(`import('${SIMULATOR}')`);
  });
});
