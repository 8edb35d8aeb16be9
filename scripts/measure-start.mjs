#!/usr/bin/env node
// Time from `npm start` to the first metric, twice: first after a source changed (the build runs),
// then with nothing changed (no build). `npm run bench:start`; prints one line per start and a
// JSON summary. The demo listens on a free loopback port (npm start -- --web.listen-address).
//
//   node scripts/measure-start.mjs [--runs N]   N second starts (default 1), the median reported
import { spawn } from 'node:child_process';
import { utimesSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TIMEOUT_MS = 180_000;
const runsFlag = process.argv.indexOf('--runs');
const runs = runsFlag >= 0 ? Math.max(1, Number(process.argv[runsFlag + 1]) || 1) : 1;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts `npm start`, polls /metrics until it has a flussonic_up sample, stops it; returns ms. */
async function startToFirstMetric() {
  const port = await freePort();
  const started = performance.now();
  const child = spawn('npm', ['start', '--silent', '--', `--web.listen-address=127.0.0.1:${port}`], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    while (performance.now() - started < TIMEOUT_MS) {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2000) });
        const text = await res.text();
        if (res.ok && /^flussonic_up\{/m.test(text)) return performance.now() - started;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no metric within ${TIMEOUT_MS / 1000} s`);
  } finally {
    try {
      process.kill(-child.pid, 'SIGTERM'); // npm and the exporter: the group this script started
    } catch {
      // gone already
    }
    await exited;
  }
}

// A changed source: the first start builds.
const now = new Date();
utimesSync(join(ROOT, 'src', 'main.ts'), now, now);
const first = await startToFirstMetric();
console.log(`first start (build): ${(first / 1000).toFixed(1)} s to first metric`);
const seconds = [];
for (let i = 0; i < runs; i++) {
  const ms = await startToFirstMetric();
  seconds.push(ms);
  console.log(`second start (no change): ${(ms / 1000).toFixed(1)} s to first metric`);
}
seconds.sort((a, b) => a - b);
const median = seconds[Math.floor(seconds.length / 2)];
// Wall-clock figures: on a busy machine they grow with the load, which is printed with them.
console.log(JSON.stringify({ node: process.version, cpus: availableParallelism(), loadavg1m: +loadavg()[0].toFixed(1), firstStartSeconds: +(first / 1000).toFixed(2), secondStartSeconds: +(median / 1000).toFixed(2), runs }));
