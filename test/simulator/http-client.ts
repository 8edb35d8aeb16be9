/** Small HTTP helpers for the simulator tests (global fetch, loopback only). */

export interface JsonResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export function basic(user: string, password: string): string {
  return 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
}

export function bearer(user: string, password: string): string {
  return 'Bearer ' + Buffer.from(`${user}:${password}`).toString('base64');
}

export async function getJson<T = any>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

export async function sendJson<T = any>(method: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse<T>> {
  return getJson<T>(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** Every item of a collection, following `next` (bounded). */
export async function walk<T = any>(base: string, key: string, params: Record<string, string> = {}, headers: Record<string, string> = {}, maxPages = 10_000): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q = new URLSearchParams(params);
    if (cursor) q.set('cursor', cursor);
    const res: JsonResponse<any> = await getJson(`${base}?${q}`, { headers });
    if (res.status !== 200) throw new Error(`page ${pages}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    items.push(...(res.body[key] as T[]));
    cursor = res.body.next;
    pages++;
    if (pages > maxPages) throw new Error('walk did not end');
  } while (cursor);
  return { items, pages };
}
