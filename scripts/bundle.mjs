#!/usr/bin/env node
// The shipped program: each of the three thread entries tsc wrote to dist/ (the command, the
// poller thread, the bcrypt thread) is bundled with the packages it loads into one file at the
// same path, replacing the module tree it starts (scripts/ and tests still import the rest of
// dist/ module by module). A thread then loads one script instead of about a hundred modules:
// the serving thread's modules take about 16 MB less memory, and `--version` answers in two
// thirds of the time.
// What is loaded only on demand (the cluster-peer client, the demo) stays a separate chunk under
// dist/chunks/; the simulator package is never bundled (it is optional and found at run time).
// Identifiers keep their names, so stack traces in logs read as in the sources. The output is
// ASCII (other characters escaped) and without comments: V8 keeps a script's source in the heap of
// every thread that runs it, and one character above U+007F would store all of it at two bytes a
// character. The bundled packages are dependencies all the same, installed with their licences.
// dist/bundles.json lists the modules each entry loads at start (test/runtime/main-thread-imports).
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
/** The entries, by path under dist/: the table the program starts its threads from. */
const { ENTRY_SCRIPTS } = await import(new URL('../dist/thread-entries.js', import.meta.url).href);

/** A module's name in the manifest: a package by its name, an own module by its path under dist/. */
function moduleName(id) {
  const marker = `${sep}node_modules${sep}`;
  const nm = id.lastIndexOf(marker);
  if (nm >= 0) {
    const parts = id.slice(nm + marker.length).split(sep);
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  return relative(DIST, id).split(sep).join('/');
}

// Its inputs are what tsc just wrote: an entry not newer than the last list is a bundle already.
const listed = (() => {
  try {
    return statSync(join(DIST, 'bundles.json')).mtimeMs;
  } catch {
    return 0;
  }
})();
for (const entry of Object.values(ENTRY_SCRIPTS)) {
  if (statSync(join(DIST, entry)).mtimeMs <= listed) {
    process.stderr.write(`bundle: dist/${entry} is bundled already; run \`npm run build\`, which compiles first\n`);
    process.exit(1);
  }
}
rmSync(join(DIST, 'chunks'), { recursive: true, force: true });
const manifest = {};
for (const entry of Object.values(ENTRY_SCRIPTS)) {
  const bundle = await rolldown({
    input: join(DIST, entry),
    platform: 'node',
    external: [/^@flussonic-exporter\/simulator(\/|$)/],
    logLevel: 'warn',
  });
  const { output } = await bundle.write({
    dir: DIST,
    entryFileNames: entry,
    chunkFileNames: 'chunks/[name]-[hash].js',
    format: 'esm',
    minify: { mangle: false, compress: { keepNames: { function: true, class: true } } },
    charset: 'ascii',
    comments: false,
  });
  await bundle.close();
  const chunks = new Map(output.filter((o) => o.type === 'chunk').map((c) => [c.fileName, c]));
  // What the entry loads at start: its own file and the chunks it imports statically.
  const atStart = new Set();
  const visit = (fileName) => {
    const chunk = chunks.get(fileName);
    if (!chunk) return;
    for (const id of Object.keys(chunk.modules)) if (!id.startsWith('\0')) atStart.add(moduleName(id));
    for (const imported of chunk.imports) visit(imported);
  };
  visit(entry);
  manifest[entry] = [...atStart].sort();
}
writeFileSync(join(DIST, 'bundles.json'), `${JSON.stringify(manifest, null, 1)}\n`);
