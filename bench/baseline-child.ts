/**
 * The baseline of the benchmark, in a process of its own: the same pages the collector reads
 * (same path, `limit`, `select`, following `next`), fetched and JSON.parse'd, nothing else. What
 * the exporter spends above this is its own work. Two ways to fetch (BaselineRequest.client):
 * Node's global fetch() with JSON.parse of the body text, the baseline of the whole-poll target
 * (what a plain client of the API spends), or plain undici on a keep-alive pool (the exporter's
 * own HTTP client: a stricter reading, printed beside it).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { cpuMs, reply } from './child-io.js';
import type { BaselineRequest, BaselineWalk } from './common.js';
import { destroyPools, getPage, poolFor } from './undici-pages.js';

let gcMsTotal = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMsTotal += entry.duration;
}).observe({ entryTypes: ['gc'] });

/** The same page with Node's global fetch (its own keep-alive dispatcher) and JSON.parse. */
async function fetchJson(url: string): Promise<{ doc: Record<string, unknown>; bytes: number }> {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
  const bytes = Number(res.headers.get('content-length'));
  return { doc: JSON.parse(await res.text()) as Record<string, unknown>, bytes };
}

async function walk(request: BaselineRequest): Promise<BaselineWalk> {
  const url = new URL(request.url);
  const getJson = request.client === 'fetch' ? (path: string) => fetchJson(url.origin + path) : (path: string) => getPage(poolFor(url.origin), path);
  const base = `${url.pathname.replace(/\/+$/, '')}/streamer/api/v3${request.path}`;
  const cpu0 = cpuMs();
  const gc0 = gcMsTotal;
  const t0 = performance.now();
  let requests = 0;
  let bytes = 0;
  let items = 0;
  if (request.path === '/config/stats') {
    const page = await getJson(base);
    requests = 1;
    bytes = page.bytes;
    items = 1;
  } else {
    const itemsKey = request.path.slice(1);
    let cursor: string | undefined;
    for (let pages = 0; pages < 100_000; pages++) {
      const query = new URLSearchParams({ limit: String(request.limit) });
      if (request.select && request.select.length > 0) query.set('select', request.select.join(','));
      if (cursor !== undefined) query.set('cursor', cursor);
      const page = await getJson(`${base}?${query.toString().replace(/%2C/g, ',')}`);
      requests++;
      bytes += page.bytes;
      items += (page.doc[itemsKey] as unknown[]).length;
      const next = page.doc.next;
      if (typeof next !== 'string' || next === '') break;
      cursor = next;
    }
  }
  const wallMs = performance.now() - t0;
  const cpu = cpuMs() - cpu0;
  await new Promise((resolve) => setImmediate(resolve));
  return { wallMs, cpuMs: cpu, gcMs: gcMsTotal - gc0, requests, bytes, items };
}

process.on('message', (message: BaselineRequest | { type: 'exit' }) => {
  if (message.type === 'exit') {
    void destroyPools().then(() => process.exit(0));
    return;
  }
  walk(message).then(
    (result) => reply({ ok: true, result }),
    (error: unknown) => reply({ ok: false, error: String(error) }),
  );
});
reply({ ok: true, result: 'ready' });
