/**
 * The cycle phase's readings (bench/cycle.ts, bench/zlib-profile.ts) against real partners: the
 * simulator's request log replayed as logged and counted in the warm-up, and V8 CPU profiles of
 * real node processes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { pathOf, waitForPolls } from '../../bench/cycle.js';
import { zlibTime } from '../../bench/zlib-profile.js';
import { USER_AGENT_PRODUCT } from '../../src/version.js';

/** One simulator for the tests of the request log: each reads and clears the log as it goes. */
let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ clock: 'manual', streams: 30, sessions: 0 });
});
afterAll(() => sim.close());

describe('replaying a poll from the request log', () => {
  it('sends a logged request again with the same path, limit, select and cursor', async () => {
    const api = `${sim.url}/streamer/api/v3/streams`;
    const first = (await (await fetch(`${api}?limit=7&select=name,stats.alive`)).json()) as { next: string };
    await (await fetch(`${api}?limit=7&select=name,stats.alive&cursor=${encodeURIComponent(first.next)}`)).arrayBuffer();
    const logged = sim.requests.last()!;
    expect(logged.query.cursor).toBe(first.next);
    sim.requests.clear();
    const again = await fetch(`${sim.url}${pathOf(logged)}`);
    expect(again.status).toBe(200);
    const replayed = sim.requests.last()!;
    expect(replayed.path).toBe(logged.path);
    expect(replayed.query).toEqual(logged.query);
  });
});

describe('the warm-up polls', () => {
  it('counts the exporter\'s polls, not other requests, and scrapes each new poll once', async () => {
    const api = `${sim.url}/streamer/api/v3`;
    const asExporter = { headers: { 'user-agent': `${USER_AGENT_PRODUCT}/test` } };
    let scraped = 0;
    let scrapedAgain: () => void = () => undefined;
    // A poller that polls again only once its last poll was scraped: each wait finds one poll.
    const polling = (async () => {
      for (let i = 0; i < 5; i++) {
        const next = new Promise<void>((resolve) => (scrapedAgain = resolve));
        await (await fetch(`${api}/streams`, asExporter)).arrayBuffer();
        await (await fetch(`${api}/config/stats`)).arrayBuffer(); // not the exporter's: no poll
        await (await fetch(`${api}/config/stats`, asExporter)).arrayBuffer();
        await next;
      }
    })();
    const polls = await waitForPolls(sim, 5, 4_000, async () => {
      scraped++;
      scrapedAgain();
    });
    await polling;
    expect(polls).toBe(5);
    expect(scraped).toBe(5);
  });
});

describe('compression time read from CPU profiles', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** A node process that runs `code` under --cpu-prof; the directory of its profile. */
  function profiled(code: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'bench-zlib-profile-'));
    dirs.push(dir);
    const run = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 15_000 });
    expect(run.status, run.stderr).toBe(0);
    return dir;
  }

  const TEXT = "const text = Buffer.from('flussonic_stream_alive{server=\"edge-1\",stream=\"s\"} 1\\n'.repeat(40000));";

  it('counts time spent deflating', () => {
    const dir = profiled(`import { deflateRawSync, gzipSync } from 'node:zlib'; ${TEXT} for (let i = 0; i < 60; i++) { deflateRawSync(text, { level: 6 }); gzipSync(text, { level: 1 }); }`);
    const time = zlibTime(dir);
    expect(time.profiles).toBe(1);
    expect(time.ms).toBeGreaterThan(0);
  });

  it('leaves out loading node:zlib and time outside it', () => {
    const dir = profiled(`import { constants } from 'node:zlib'; let n = constants.Z_SYNC_FLUSH; for (let i = 0; i < 5e7; i++) n ^= i; console.log(n);`);
    const time = zlibTime(dir);
    expect(time.sampledMs).toBeGreaterThan(0);
    expect(time.ms).toBe(0);
  });
});
