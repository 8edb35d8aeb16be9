/**
 * Concurrent scrapers of the benchmark, in a process of their own so that their latency is not
 * disturbed by the simulator's work: `concurrency` loops, each GET /metrics after the previous
 * answer (like Prometheus servers scraping on their own schedule, minus the pauses), until
 * `maxRequests` answers or `maxMs` elapsed. Latency is request start to last body byte.
 *
 * The client is node:http on a keep-alive agent, its body read as 'data' events and dropped. The
 * instrument matters at these sizes: against a static Node server sending a 1.9 MB buffer, 20
 * paced scrapers (once a second each, 45 s, this 2-core machine, idle) read p99 8.6-9.9 ms with
 * undici (its parser runs in WebAssembly, and every chunk is copied through its memory), 6.0 ms
 * with node:http and 4.3 ms with a bare socket counting bytes. undici measured mostly itself.
 */
import { Agent, get } from 'node:http';
import { percentile, reply } from './child-io.js';
import type { ScrapeRequest, ScrapeResult } from './common.js';

/** A scrape that has not ended after this long fails (the loops stay bounded in time). */
const SCRAPE_TIMEOUT_MS = 30_000;

/** One GET to its last body byte: the status, and the body bytes (read and dropped). */
function fetchOnce(url: URL, agent: Agent, headers: Record<string, string>): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: url.hostname, port: url.port, path: url.pathname, agent, headers }, (res) => {
      let bytes = 0;
      let ended = false;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => {
        ended = true;
        resolve({ status: res.statusCode ?? 0, bytes });
      });
      res.on('error', reject);
      // A body cut off closes without 'end' (and, depending on the Node version, without 'error').
      res.on('close', () => ended || reject(new Error('answer cut off')));
    });
    req.setTimeout(SCRAPE_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${SCRAPE_TIMEOUT_MS} ms`)));
    req.on('error', reject);
  });
}

async function scrape(request: ScrapeRequest): Promise<ScrapeResult> {
  const url = new URL(request.url);
  const agent = new Agent({ keepAlive: true, maxSockets: request.concurrency });
  const headers: Record<string, string> = request.gzip ? { 'accept-encoding': 'gzip' } : {};
  const latencies: number[] = [];
  let errors = 0;
  let bytes = 0;
  let issued = 0;
  const started = performance.now();
  const every = request.everyMs;
  const loop = async () => {
    let next = started + (every === undefined ? 0 : Math.random() * every);
    while (issued < request.maxRequests && performance.now() - started < request.maxMs) {
      if (every !== undefined) {
        const wait = next - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        next += every;
        if (performance.now() - started >= request.maxMs) break;
      }
      issued++;
      const t0 = performance.now();
      try {
        const answer = await fetchOnce(url, agent, headers);
        bytes += answer.bytes;
        if (answer.status !== 200) errors++;
        else latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: request.concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return {
    count: latencies.length,
    errors,
    p50Ms: percentile(latencies, 50),
    p90Ms: percentile(latencies, 90),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    bytesPerScrape: latencies.length > 0 ? bytes / (latencies.length + errors) : 0,
    seconds,
    ...(request.latencies === true ? { latenciesMs: latencies } : {}),
  };
}

process.on('message', (message: ScrapeRequest | { type: 'exit' }) => {
  if ('type' in message) process.exit(0);
  scrape(message).then(
    (result) => reply({ ok: true, result }),
    (error: unknown) => reply({ ok: false, error: String(error) }),
  );
});
reply({ ok: true, result: 'ready' });
