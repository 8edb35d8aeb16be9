/**
 * The fleet end to end: 12 simulated Flussonic servers, 3 real exporter processes (dist/main.js)
 * sharding them (`--shard N --total-shards 3`, and `--shard-from-hostname` for the third, as a
 * StatefulSet pod), and a real Prometheus that knows only the replicas' /sd URLs (http_sd_configs).
 * Every server must be polled by exactly one replica: `count by (server) (flussonic_up) == 1` for
 * all 12, in the per-target /probe job and in the job that scrapes each replica's /metrics. The
 * jobs are docs/fleet.md's own (their http_sd URLs pointed at the replicas): the probe job keeps
 * one `up` per server, 12 in all, each with its server's name in `instance` and `server`. Each
 * replica's address in /sd comes from --web.external-address, its environment variable, or the
 * connection's local address (one replica each).
 * Prints the servers and the RSS of each replica (the figures of the fleet note); set
 * FLEET_E2E_SERVERS for a bigger run.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { ensureBuilt, ExporterProcess, killAll } from '../cli/exporter-process.js';
import { freePort, PrometheusApi, spawnLogged, stopProcess, waitFor, type Spawned } from '../grafana/harness.js';
import { findBinary } from '../helpers/promtool.js';
import { REPO_ROOT } from '../helpers/shared.js';

const prometheusPath = findBinary('prometheus');
/** 12 in the suite; FLEET_E2E_SERVERS=60 for a bigger measuring run. */
const SERVERS = Number(process.env.FLEET_E2E_SERVERS ?? 12);
const REPLICAS = 3;
const PROBE_JOB = 'flussonic-probe';
const REPLICA_JOB = 'flussonic-exporter';

/** The scrape jobs docs/fleet.md shows (the yaml block naming both jobs), by job name. */
function documentedJobs(): Map<string, Record<string, unknown>> {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'fleet.md'), 'utf8');
  const block = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes(`job_name: ${PROBE_JOB}`) && b.includes(`job_name: ${REPLICA_JOB}`));
  if (!block) throw new Error(`docs/fleet.md shows no yaml block with the jobs ${PROBE_JOB} and ${REPLICA_JOB}`);
  const jobs = parseYaml(block) as Record<string, unknown>[];
  return new Map(jobs.map((job) => [String(job.job_name), job]));
}

describe.skipIf(!prometheusPath)('3 exporter replicas over 12 servers, scraped by Prometheus through /sd', () => {
  let dir = '';
  let sims: RunningSimulator[] = [];
  const replicas: { process: ExporterProcess; url: string }[] = [];
  let prometheus: Spawned | undefined;
  let api: PrometheusApi;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'flussonic-fleet-e2e-'));
    sims = await Promise.all(Array.from({ length: SERVERS }, (_, i) => startSimulator({ streams: 50, sessions: 200, seed: i + 1, churn: false })));
    // The simulators of a bigger run share this test's one process: give their polls more time.
    const [interval, timeout] = SERVERS > 12 ? ['10s', '8s'] : ['2s', '1500ms'];
    const config = { poll_interval: interval, log_level: 'warn', servers: sims.map((sim, i) => ({ name: `edge-${i + 1}`, url: sim.url, timeout })) };
    writeFileSync(join(dir, 'config.yaml'), stringifyYaml(config));
    for (let shard = 0; shard < REPLICAS; shard++) {
      const sharding = shard === REPLICAS - 1 ? ['--shard-from-hostname'] : ['--shard', String(shard)];
      // The address /sd names: the flag (shard 0), the variable the manifests set (shard 1), or
      // the connection's local address (shard 2, listening on a port of its own choosing).
      const port = shard < 2 ? await freePort() : 0;
      const external = shard === 0 ? ['--web.external-address', `127.0.0.1:${port}`] : [];
      const process = new ExporterProcess(['--config', join(dir, 'config.yaml'), '--listen-address', `127.0.0.1:${port}`, '--log-level', 'info', ...sharding, ...external, '--total-shards', String(REPLICAS)], {
        HOSTNAME: `flussonic-exporter-${shard}`,
        ...(shard === 1 ? { FLUSSONIC_EXPORTER_EXTERNAL_ADDRESS: `127.0.0.1:${port}` } : {}),
      });
      replicas.push({ process, url: await process.baseUrl() });
    }

    const prometheusPort = await freePort();
    const sd = (query: string) => replicas.map((r) => ({ url: `${r.url}/sd${query}`, refresh_interval: '1s' }));
    // docs/fleet.md's jobs as written, their http_sd URLs pointed at these replicas.
    const jobs = documentedJobs();
    const job = (name: string, query: string) => {
      const documented = jobs.get(name);
      if (!documented) throw new Error(`docs/fleet.md shows no job ${name}`);
      const urls = (documented.http_sd_configs as { url: string }[]).map((c) => new URL(c.url));
      expect(urls.every((u) => u.search === query)).toBe(true);
      return { ...documented, http_sd_configs: sd(query) };
    };
    const prometheusConfig = {
      global: { scrape_interval: '1s', scrape_timeout: '1s' },
      scrape_configs: [job(REPLICA_JOB, '?scrape=metrics'), job(PROBE_JOB, '')],
    };
    writeFileSync(join(dir, 'prometheus.yml'), stringifyYaml(prometheusConfig));
    mkdirSync(join(dir, 'data'));
    prometheus = spawnLogged('prometheus', prometheusPath!, [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
      '--log.level=warn',
    ]);
    api = new PrometheusApi(`http://127.0.0.1:${prometheusPort}`);
    await waitFor('Prometheus to be ready', 20_000, async () => {
      if (prometheus!.child.exitCode !== null) throw new Error(`prometheus exited: ${prometheus!.output()}`);
      return (await fetch(`${api.baseUrl}/-/ready`, { signal: AbortSignal.timeout(2000) })).ok ? true : undefined;
    });
  }, 120_000);

  afterAll(async () => {
    await stopProcess(prometheus);
    await Promise.all(replicas.map((r) => (r.process.child.kill('SIGTERM'), r.process.exitWithin(10_000).catch(() => undefined))));
    await killAll();
    await Promise.all(sims.map((s) => s.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  test('every server is polled by exactly one replica', async () => {
    const expected = Array.from({ length: SERVERS }, (_, i) => `edge-${i + 1}`).sort();
    for (const job of [PROBE_JOB, REPLICA_JOB]) {
      const servers = await waitFor(`flussonic_up of all ${SERVERS} servers in job ${job}`, 60_000, async () => {
        const r = await api.query(`count by (server) (flussonic_up{job="${job}"} == 1) == 1`);
        if (r.status !== 'success' || r.data.resultType !== 'vector') return undefined;
        const found = r.data.result.map((s) => s.metric.server!).sort();
        return found.length === SERVERS ? found : undefined;
      }, 500);
      expect(servers).toEqual(expected);
      // No server twice: counted over all its series, never above 1.
      const twice = await api.query(`count by (server) (flussonic_up{job="${job}"}) > 1`);
      expect(twice.status === 'success' && twice.data.resultType === 'vector' ? twice.data.result : ['query failed']).toEqual([]);
    }

    // One `up` per server in the probe job, named by the server; the samples keep `server` as theirs.
    const ups = await waitFor(`up of all ${SERVERS} servers in job ${PROBE_JOB}`, 30_000, async () => {
      const r = await api.query(`up{job="${PROBE_JOB}"} == 1`);
      if (r.status !== 'success' || r.data.resultType !== 'vector') return undefined;
      return r.data.result.length >= SERVERS ? r.data.result.map((s) => s.metric) : undefined;
    }, 500);
    expect(ups.map((m) => m.server).sort()).toEqual(expected);
    expect(ups.every((m) => m.instance === m.server)).toBe(true);
    const upSeries = await api.query(`count(up{job="${PROBE_JOB}"})`);
    expect(upSeries.status === 'success' && upSeries.data.resultType === 'vector' ? Number(upSeries.data.result[0]?.value[1]) : NaN).toBe(SERVERS);
    const renamed = await api.query(`count({job="${PROBE_JOB}", exported_server!=""})`);
    expect(renamed.status === 'success' && renamed.data.resultType === 'vector' ? renamed.data.result : ['query failed']).toEqual([]);

    // The figures of one fleet run: servers per replica (from /sd) and memory (RSS) per replica.
    const rows: string[] = [];
    let total = 0;
    for (const [shard, replica] of replicas.entries()) {
      const groups = (await (await fetch(`${replica.url}/sd`)).json()) as { targets: string[] }[];
      total += groups.length;
      // Each replica names its own address (the one Prometheus scraped it at), whoever asked.
      expect(new Set(groups.flatMap((g) => g.targets))).toEqual(new Set([new URL(replica.url).host]));
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${replica.process.child.pid}/status`, 'utf8'))?.[1];
      rows.push(`replica shard ${shard}/${REPLICAS}: ${groups.length} servers, RSS ${rss ? (Number(rss) / 1024).toFixed(1) : '?'} MiB`);
    }
    expect(total).toBe(SERVERS);
    console.info(`fleet run (${SERVERS} servers x 50 streams, 200 sessions):\n${rows.join('\n')}`);
  }, 120_000);
});
