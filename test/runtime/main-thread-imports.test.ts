/**
 * The serving thread loads only what serving needs. The build bundles each thread's entry with
 * what it loads at start (scripts/bundle.mjs) and lists those modules in dist/bundles.json; what is
 * loaded on demand (dynamic import()) stays in chunks of its own and is not listed. The HTTP client
 * (undici; with the clients about 5 MB of RSS) and the poll runtime belong to the worker threads.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SIMULATOR_PACKAGE as SIMULATOR } from '../../src/demo.js';
import { ENTRY_SCRIPTS } from '../../src/thread-entries.js';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist');

/** The modules each built entry loads at start: own modules by path under dist/, packages by name. */
function bundles(): Record<string, readonly string[]> {
  const file = resolve(DIST, 'bundles.json');
  expect(existsSync(file), 'dist/ is built by npm test before vitest').toBe(true);
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, readonly string[]>;
}

describe('modules of the serving thread', () => {
  it('leave out the HTTP client, the collectors runtime and the simulator, which a worker loads', () => {
    const built = bundles();
    expect(Object.keys(built).sort()).toEqual(Object.values(ENTRY_SCRIPTS).sort());
    const main = built[ENTRY_SCRIPTS.command]!;
    const worker = built[ENTRY_SCRIPTS.poller]!;
    // The list names what a worker loads, so it would name the same in the main thread.
    for (const m of ['undici', 'flussonic/client.js', 'upstream/http.js', 'threads/runtime.js', 'poll/targets.js']) expect(worker).toContain(m);
    expect(main).toContain('fastify');
    expect(main).toContain('threads/pool.js');
    for (const m of ['undici', 'flussonic/client.js', 'upstream/http.js', 'catena/client.js', 'threads/runtime.js', 'threads/in-process.js', 'poll/targets.js', SIMULATOR]) {
      expect(main, `${m} is loaded with dist/main.js`).not.toContain(m);
    }
    // The bcrypt thread is bcryptjs and its own entry, nothing of the exporter's.
    expect(built[ENTRY_SCRIPTS.bcrypt]).toEqual(['bcryptjs', ENTRY_SCRIPTS.bcrypt]);
  });

  it('load the demo, and with it the simulator, only on demand', () => {
    const main = readFileSync(resolve(DIST, ENTRY_SCRIPTS.command), 'utf8');
    // The simulator is never bundled: the demo's chunk imports it by name when the demo starts.
    const chunk = /import\(["'`]\.\/(chunks\/demo-[\w-]+\.js)["'`]\)/.exec(main);
    expect(chunk, 'dist/main.js imports the demo chunk on demand').not.toBeNull();
    expect(readFileSync(resolve(DIST, chunk![1]!), 'utf8')).toMatch(new RegExp(`import\\(["'\`]${SIMULATOR}["'\`]\\)`));
  });
});

describe('the shipped scripts', () => {
  it('are ASCII, so V8 keeps their source at one byte per character', () => {
    // A thread keeps its script's source in its heap for lazy compilation, and a single character
    // above U+007F stores the whole of it as two-byte text (1.7 MB more for dist/main.js).
    const scripts = [...Object.values(ENTRY_SCRIPTS), ...readdirSync(resolve(DIST, 'chunks')).map((f) => `chunks/${f}`)];
    expect(scripts.length).toBeGreaterThan(3);
    for (const script of scripts) {
      const text = readFileSync(resolve(DIST, script), 'latin1');
      const at = text.search(/[^\x00-\x7f]/);
      expect(at, `dist/${script} has a non-ASCII byte at ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 30), at + 10))}`).toBe(-1);
    }
  });
});
