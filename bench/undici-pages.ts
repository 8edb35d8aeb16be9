/** The replays' HTTP client: undici pools and a page reader, as the exporter's client reads pages. */
import { Pool } from 'undici';

const pools = new Map<string, Pool>();

/** One keep-alive undici pool per origin, as the exporter's client keeps: the replays' client. */
export function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 4, pipelining: 1 });
    pools.set(origin, pool);
  }
  return pool;
}

/** GET one JSON page with undici and JSON.parse it: what a replay does per request, nothing else. */
export async function getPage(pool: Pool, path: string): Promise<{ doc: Record<string, unknown>; bytes: number }> {
  const { statusCode, body } = await pool.request({ path, method: 'GET', headers: { accept: 'application/json' } });
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    bytes += chunk.length;
  }
  if (statusCode !== 200) throw new Error(`${path}: HTTP ${statusCode}`);
  return { doc: JSON.parse(Buffer.concat(chunks, bytes).toString('utf8')) as Record<string, unknown>, bytes };
}

/** Closes every pool poolFor() made (a child's exit). */
export async function destroyPools(): Promise<void> {
  await Promise.all([...pools.values()].map((p) => p.destroy()));
}
