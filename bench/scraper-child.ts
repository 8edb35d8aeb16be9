/**
 * Concurrent scrapers of the benchmark, in a process of their own so that their latency is not
 * disturbed by the simulator's work: `concurrency` loops, each GET /metrics after the previous
 * answer (like Prometheus servers scraping on their own schedule, minus the pauses), until
 * `maxRequests` answers or `maxMs` elapsed. Latency is request start to last body byte.
 */
import { Pool } from 'undici';
import { percentile, reply, type ScrapeRequest, type ScrapeResult } from './common.js';

async function scrape(request: ScrapeRequest): Promise<ScrapeResult> {
  const url = new URL(request.url);
  const pool = new Pool(url.origin, { connections: request.concurrency, pipelining: 1 });
  const headers = request.gzip ? { 'accept-encoding': 'gzip' } : {};
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
        const { statusCode, body } = await pool.request({ path: url.pathname, method: 'GET', headers });
        for await (const chunk of body as AsyncIterable<Buffer>) bytes += chunk.length;
        if (statusCode !== 200) errors++;
        else latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: request.concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  await pool.destroy();
  return {
    count: latencies.length,
    errors,
    p50Ms: percentile(latencies, 50),
    p90Ms: percentile(latencies, 90),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    bytesPerScrape: latencies.length > 0 ? bytes / (latencies.length + errors) : 0,
    seconds,
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
