/**
 * How fast the simulator serves pages at scale (10,000 streams, 100,000 sessions).
 * Not part of npm test. Run:
 *   npm run build && npx tsc -p tsconfig.bench.json && node dist-bench/bench/simulator-page.js
 */
import { performance } from 'node:perf_hooks';
import { startSimulator } from '@flussonic-exporter/simulator';

const SESSION_SELECT = 'id,name,proto,bytes,opened_at,closed_at,country,dvr,secure';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function summary(label: string, samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  return `${label.padEnd(52)} n=${String(s.length).padStart(4)}  p50 ${percentile(s, 50).toFixed(2).padStart(7)} ms  p95 ${percentile(s, 95).toFixed(2).padStart(7)} ms  max ${s[s.length - 1]!.toFixed(2).padStart(7)} ms`;
}

async function walk(url: string, key: string, params: string): Promise<{ wall: number[]; server: number[]; bytes: number; items: number }> {
  const wall: number[] = [];
  const server: number[] = [];
  let bytes = 0;
  let items = 0;
  let cursor: string | null = null;
  do {
    const t0 = performance.now();
    const res = await fetch(`${url}?${params}${cursor ? `&cursor=${cursor}` : ''}`);
    const text = await res.text();
    wall.push(performance.now() - t0);
    bytes += text.length;
    const body = JSON.parse(text) as { next: string | null; timing: { load: number } } & Record<string, unknown[]>;
    server.push(body.timing.load / 1000);
    items += (body[key] as unknown[]).length;
    cursor = body.next;
  } while (cursor);
  return { wall, server, bytes, items };
}

async function main(): Promise<void> {
  for (const shape of ['flat', 'nested'] as const) {
    const t0 = performance.now();
    const sim = await startSimulator({ streams: 10_000, sessions: 100_000, gpus: 4, dvrs: 2, clock: 'manual', shape });
    console.log(`\n== ${shape} shape: 10,000 streams, ${sim.world.sessions.size} sessions; started in ${(performance.now() - t0).toFixed(0)} ms`);
    const api = `${sim.url}/streamer/api/v3`;
    // Warm up the JIT and the connection pool.
    await walk(`${api}/sessions`, 'sessions', `limit=1000&select=${SESSION_SELECT}`);

    const sel = await walk(`${api}/sessions`, 'sessions', `limit=1000&select=${SESSION_SELECT}`);
    console.log(summary('GET /sessions limit=1000 select=9 fields (wall)', sel.wall));
    console.log(summary('  same, server-side timing.load', sel.server));
    console.log(`  full walk: ${sel.items} sessions, ${(sel.wall.reduce((a, b) => a + b, 0)).toFixed(0)} ms, ${(sel.bytes / 1e6).toFixed(1)} MB`);
    const unsel = await walk(`${api}/sessions`, 'sessions', 'limit=1000');
    console.log(summary('GET /sessions limit=1000 no select (wall)', unsel.wall));
    console.log(`  full walk: ${(unsel.bytes / 1e6).toFixed(1)} MB; select-limited is ${((100 * sel.bytes) / unsel.bytes).toFixed(1)}% of it`);
    const sorted = await walk(`${api}/sessions`, 'sessions', `limit=1000&sort=-bytes&select=${SESSION_SELECT}`);
    console.log(summary('GET /sessions limit=1000 sort=-bytes (wall)', sorted.wall));
    const filtered = await walk(`${api}/sessions`, 'sessions', `limit=1000&proto=hls,dash&select=${SESSION_SELECT}`);
    console.log(summary('GET /sessions limit=1000 proto=hls,dash (wall)', filtered.wall));
    const streams = await walk(`${api}/streams`, 'streams', 'limit=1000&select=name,title,named_by,stats');
    console.log(summary('GET /streams limit=1000 select=name,title,named_by,stats', streams.wall));
    const streamsAll = await walk(`${api}/streams`, 'streams', 'limit=1000');
    console.log(summary('GET /streams limit=1000 no select (wall)', streamsAll.wall));

    const steps: number[] = [];
    for (let i = 0; i < 10; i++) {
      const s0 = performance.now();
      sim.advance(15_000);
      steps.push(performance.now() - s0);
    }
    console.log(summary('advance(15 s) with churn', steps));
    await sim.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
