#!/usr/bin/env node
/**
 * Figures for the discovery bounds (docs/fleet.md, "Bounds"): a seed simulator lists N peers
 * (all served by a few peer simulators on loopback, each peer under its own hostname) and the
 * built exporter (dist/main.js, a child process) discovers them.
 *
 *   phase "default": the seed lists 5 peers, then N; at the default caps the N-peer list must be
 *     refused and change nothing but flussonic_exporter_discovery_refused_total.
 *   phase "raised": max_targets and max_targets_per_source = N; every peer must be polled with
 *     file descriptors bounded by max_connections, no EMFILE, and /metrics answered every time.
 * Discovered servers poll every 60 s with the server collector only (one request each per poll),
 * so that the simulators (one child process) keep up on a small machine.
 *
 * Usage: npm run build && node scripts/discovery-bounds.mjs [--peers 10000] [--phase default|raised|both]
 *        [--seconds 60] [--workers 2] [--max-connections 512]
 * Talks only to 127.0.0.1; everything it starts is stopped at the end (and on a deadline).
 */
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startSimulator } from '@flussonic-exporter/simulator';

// The simulators run in a child process of their own, so that their load never delays this
// process's scrapes and measurements.
if (process.argv[2] === '--serve-simulators') {
  const count = Number(process.argv[3]);
  const common = { streams: 2, sessions: 2, clock: 'real', churn: false, host: '127.0.0.1' };
  const sims = await Promise.all(Array.from({ length: count }, (_, i) => startSimulator({ ...common, seed: i + 2 })));
  const seed = await startSimulator({ ...common, seed: 1 });
  process.on('message', async (m) => {
    if (m.type === 'peers') {
      seed.world.cluster.set(Array.from({ length: m.count }, (_, i) => ({ hostname: `peer-${i}.example.net`, apiUrl: sims[i % sims.length].url })));
      process.send({ type: 'peers-set' });
    } else if (m.type === 'close') {
      await Promise.all([seed, ...sims].map((sim) => sim.close()));
      process.exit(0);
    }
  });
  process.send({ type: 'ready', seed: seed.url });
  await new Promise(() => undefined);
}

const { values: args } = parseArgs({
  options: {
    peers: { type: 'string', default: '10000' },
    phase: { type: 'string', default: 'both' },
    seconds: { type: 'string', default: '60' },
    workers: { type: 'string', default: '2' },
    'max-connections': { type: 'string', default: '512' },
    simulators: { type: 'string', default: '4' },
  },
});
const PEERS = Number(args.peers);
const SECONDS = Number(args.seconds);
const PORT = 19000 + Math.floor(Math.random() * 1000);
const HARD_DEADLINE_MS = (SECONDS * 2 + 120) * 1000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stamp = () => new Date().toISOString().slice(11, 19);

function procFigures(pid) {
  let fds = -1;
  let rssMiB = -1;
  try {
    fds = readdirSync(`/proc/${pid}/fd`).length;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    rssMiB = Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  } catch {
    // gone
  }
  return { fds, rssMiB };
}

/** One scrape of /metrics with a 5 s deadline: the body, or undefined when not answered. */
async function scrape() {
  try {
    const r = await fetch(`http://127.0.0.1:${PORT}/metrics`, { signal: AbortSignal.timeout(5000) });
    return r.ok ? await r.text() : undefined;
  } catch {
    return undefined;
  }
}

function metric(text, name, labels = {}) {
  let sum;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

const upCount = (text) => text.split('\n').filter((l) => l.startsWith('flussonic_up{') && l.endsWith(' 1')).length;

let simulators;
let exporterChild;
function setPeers(count) {
  return new Promise((resolve) => {
    simulators.once('message', resolve);
    simulators.send({ type: 'peers', count });
  });
}

async function phase(name, caps, seedUrl, dir) {
  await setPeers(5);
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    [
      `listen_address: 127.0.0.1:${PORT}`,
      'log_level: warn',
      `workers: ${args.workers}`,
      `max_connections: ${args['max-connections']}`,
      'poll_interval: 60s',
      'templates:',
      '  edge:',
      '    timeout: 20s',
      '    collectors: { streams: false, sessions: false, server: true }',
      'discovery:',
      '  refresh_interval: 5s',
      '  allow_loopback: true',
      ...(caps ? [`  max_targets: ${caps}`, `  max_targets_per_source: ${caps}`] : []),
      '  cluster_peers:',
      '    - name: cluster',
      `      seeds: [${seedUrl}]`,
      '      template: edge',
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, ['dist/main.js', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  exporterChild = child;
  let emfile = 0;
  let refusedLines = 0;
  const countLines = (chunk) => {
    const text = chunk.toString();
    emfile += (text.match(/EMFILE/g) ?? []).length;
    refusedLines += (text.match(/is refused and the last good list/g) ?? []).length;
  };
  child.stdout.on('data', countLines);
  child.stderr.on('data', countLines);
  const out = { phase: name, peers: PEERS, caps: caps ?? 'default (1000)', scrapes: 0, answered: 0, maxFds: 0, maxRssMiB: 0, maxUp: 0, emfile: 0 };
  try {
    // Up with 5 peers first.
    for (let i = 0; i < 60; i++) {
      const body = await scrape();
      if (body && upCount(body) === 5) break;
      await sleep(1000);
    }
    const before = { ...procFigures(child.pid), up: upCount((await scrape()) ?? '') };
    console.log(`${stamp()} ${name}: 5 peers up; fds ${before.fds}, RSS ${before.rssMiB} MiB; now listing ${PEERS} peers`);
    out.before = before;
    await setPeers(PEERS);
    const end = Date.now() + SECONDS * 1000;
    let last = '';
    while (Date.now() < end) {
      const started = Date.now();
      const body = await scrape();
      out.scrapes++;
      const figures = procFigures(child.pid);
      out.maxFds = Math.max(out.maxFds, figures.fds);
      out.maxRssMiB = Math.max(out.maxRssMiB, figures.rssMiB);
      if (body !== undefined) {
        out.answered++;
        out.maxUp = Math.max(out.maxUp, upCount(body));
        last = body;
      }
      if (out.scrapes % 10 === 0 || process.env.VERBOSE) console.log(`${stamp()} ${name}: up ${upCount(body ?? '')}, fds ${figures.fds}, RSS ${figures.rssMiB} MiB, scrape ${body ? 'answered' : 'NOT answered'} in ${Date.now() - started} ms`);
      await sleep(Math.max(0, 1000 - (Date.now() - started)));
    }
    out.emfile = emfile;
    out.refusedLogLines = refusedLines;
    out.refusedCounter = metric(last, 'flussonic_exporter_discovery_refused_total', { source: 'cluster' });
    out.ownedServers = metric(last, 'flussonic_exporter_owned_targets', { kind: 'server' });
    out.connectionErrors = metric(last, 'flussonic_exporter_api_errors_total', { reason: 'connection' });
    out.timeouts = metric(last, 'flussonic_exporter_api_errors_total', { reason: 'timeout' });
    out.upAtEnd = upCount(last);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        r();
      }, 10_000);
      child.once('exit', () => {
        clearTimeout(t);
        r();
      });
    });
  }
  return out;
}

const deadline = setTimeout(() => {
  console.error('hard deadline reached; exiting');
  exporterChild?.kill('SIGKILL');
  simulators?.kill('SIGKILL');
  process.exit(3);
}, HARD_DEADLINE_MS);
deadline.unref();

const dir = mkdtempSync(join(tmpdir(), 'discovery-bounds-'));
simulators = fork(new URL(import.meta.url).pathname, ['--serve-simulators', args.simulators], { stdio: 'inherit' });
const { seed: seedUrl } = await new Promise((resolve) => simulators.once('message', resolve));
const results = [];
try {
  if (args.phase === 'default' || args.phase === 'both') results.push(await phase('default', undefined, seedUrl, dir));
  if (args.phase === 'raised' || args.phase === 'both') results.push(await phase('raised', PEERS, seedUrl, dir));
} finally {
  simulators.send({ type: 'close' });
  await new Promise((r) => simulators.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(results, null, 2));
process.exit(0);
