#!/usr/bin/env node
/**
 * Basic auth under a wrong-password flood, against a real exporter (`node dist/main.js`, built by
 * `npm run build`) on a loopback port. Prints figures; asserts nothing.
 *
 *   node scripts/auth-flood.mjs [--cost 10] [--flood 150]
 *
 * The flood comes from a process of its own (as an attacker's would), so the measuring scraper's
 * event loop is not the one sending 150 requests; the scraper keeps its connection alive, as
 * Prometheus does.
 * 1. quiet: an uncached scrape of a real user (pays one bcrypt), then cached scrapes.
 * 2. flood: FLOOD concurrent requests with wrong passwords (half for the real user, half for
 *    unknown users); meanwhile a cached scraper scrapes every 20 ms, and a second real user,
 *    never seen before, scrapes once (uncached): their latencies and statuses.
 * 3. timing: a wrong password for the real user against an unknown user, uncached each time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import bcrypt from 'bcryptjs';

const { values } = parseArgs({ options: { cost: { type: 'string', default: '10' }, flood: { type: 'string', default: '150' }, 'flood-port': { type: 'string' } } });
const COST = Number(values.cost);
const FLOOD = Number(values.flood);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

if (values['flood-port'] !== undefined) {
  // The flooder: FLOOD concurrent wrong-password requests, then their statuses and times as JSON.
  await runFlood(Number(values['flood-port']));
  process.exit(0);
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
const dir = mkdtempSync(join(tmpdir(), 'fe-auth-flood-'));
writeFileSync(join(dir, 'config.yaml'), 'servers:\n  - name: edge\n    url: http://127.0.0.1:1\n');
writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  scraper: ${bcrypt.hashSync('scrape-pw', COST)}\n  second: ${bcrypt.hashSync('second-pw', COST)}\n`);

async function runFlood(to) {
  const started = performance.now();
  const flood = Array.from({ length: FLOOD }, (_, i) => scrape(basic(i % 2 ? 'scraper' : `mallory-${i}`, `guess-${i}`), false, 30_000, to));
  process.stdout.write('sent\n');
  const results = await Promise.all(flood);
  process.stdout.write(`${JSON.stringify({ results, ms: performance.now() - started })}\n`);
}

const child = spawn(process.execPath, [join(ROOT, 'dist', 'main.js'), '--config', join(dir, 'config.yaml'), '--web.config.file', join(dir, 'web.yml'), '--web.listen-address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve, reject) => {
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffered += chunk;
    for (const line of buffered.split('\n')) {
      try {
        const entry = JSON.parse(line);
        if (entry.msg === 'listening') resolve(entry.address.port);
      } catch {
        // a partial line
      }
    }
  });
  child.once('exit', (code) => reject(new Error(`the exporter exited (${code})`)));
  setTimeout(() => reject(new Error('the exporter did not listen within 20 s')), 20_000).unref();
});

/** CPU milliseconds (user + system) of one thread of the exporter; its serving thread's tid is its pid (Linux). */
function threadCpuMs(pid, tid = pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

function basic(user, password) {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}


/** One GET /metrics (on a new connection unless `agent`): status and milliseconds until the whole answer. */
function scrape(authorization, agent = false, timeoutMs = 30_000, to = port) {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port: to, path: '/metrics', headers: { authorization }, agent, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 'error', ms: performance.now() - started }));
    req.end();
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const ms = (v) => `${v.toFixed(1)} ms`;
const count = (results) => Object.entries(results.reduce((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {})).map(([s, n]) => `${s}: ${n}`).join(', ');

try {
  console.log(`node ${process.version}, bcrypt cost ${COST}, flood ${FLOOD}`);
  const first = await scrape(basic('scraper', 'scrape-pw'));
  const quiet = [];
  for (let i = 0; i < 20; i++) quiet.push((await scrape(basic('scraper', 'scrape-pw'), keepAlive)).ms);
  quiet.sort((a, b) => a - b);
  console.log(`quiet: uncached scrape ${first.status} in ${ms(first.ms)}; cached p50 ${ms(pct(quiet, 50))}, p99 ${ms(pct(quiet, 99))}`);

  const flooder = spawn(process.execPath, [fileURLToPath(import.meta.url), '--flood', String(FLOOD), '--flood-port', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let floodOut = '';
  const sent = new Promise((resolve) => flooder.stdout.setEncoding('utf8').on('data', (c) => ((floodOut += c), floodOut.startsWith('sent') && resolve())));
  const flooded = new Promise((resolve) => flooder.once('exit', resolve));
  let done = false;
  void flooded.then(() => (done = true));
  await sent;
  const cpuBefore = threadCpuMs(child.pid);
  const uncached = scrape(basic('second', 'second-pw'));
  const cached = [];
  while (!done) {
    cached.push(await scrape(basic('scraper', 'scrape-pw'), keepAlive));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const servingCpuMs = threadCpuMs(child.pid) - cpuBefore;
  const { results: floodResults, ms: floodMs } = JSON.parse(floodOut.split('\n')[1]);
  const second = await uncached;
  const cachedMs = cached.map((r) => r.ms).sort((a, b) => a - b);
  console.log(`flood: ${FLOOD} wrong-password requests answered within ${ms(floodMs)} (${count(floodResults)}); slowest ${ms(Math.max(...floodResults.map((r) => r.ms)))}`);
  console.log(`during the flood: ${cached.length} cached scrapes (${count(cached)}): p50 ${ms(pct(cachedMs, 50))}, p99 ${ms(pct(cachedMs, 99))}, max ${ms(cachedMs.at(-1))}`);
  console.log(`during the flood: the serving thread used ${ms(servingCpuMs)} of CPU (10 ms ticks), the rest ran in the bcrypt and poll threads`);
  console.log(`during the flood: an uncached scrape of a second real user: ${second.status} in ${ms(second.ms)}`);

  // Timing of a wrong password for a real user against an unknown user, both uncached.
  const known = [];
  const unknown = [];
  for (let i = 0; i < 5; i++) {
    known.push((await scrape(basic('scraper', `timing-${i}`))).ms);
    unknown.push((await scrape(basic(`nobody-${i}`, `timing-${i}`))).ms);
  }
  known.sort((a, b) => a - b);
  unknown.sort((a, b) => a - b);
  console.log(`timing (median of 5): wrong password of a real user ${ms(known[2])}, unknown user ${ms(unknown[2])}`);
  const metrics = await new Promise((resolve) => {
    request({ host: '127.0.0.1', port, path: '/metrics', headers: { authorization: basic('scraper', 'scrape-pw') }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c) => (body += c)).on('end', () => resolve(body));
    }).end();
  });
  for (const line of metrics.split('\n')) if (line.startsWith('flussonic_exporter_http_auth_throttled_total{')) console.log(line);
} finally {
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
