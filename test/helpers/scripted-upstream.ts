/**
 * A tiny HTTP server on 127.0.0.1:0 whose answers a test scripts request by request. It stands in
 * for upstream misbehaviour the simulator does not model (cursors that never end, pages that do
 * not advance, the same item on two pages, a connection dropped mid-body). It records every
 * request, Authorization header included, so tests can check what went over the wire.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
}

export type ScriptedAnswer =
  | { readonly status?: number; readonly json?: unknown; readonly body?: string | Buffer; readonly headers?: Record<string, string> }
  | 'hang'
  | ((res: ServerResponse) => void);

export interface ScriptedUpstream {
  readonly url: string;
  readonly requests: ScriptedRequest[];
  /** Connections open now, and accepted since the start. */
  connections(): { readonly open: number; readonly accepted: number };
  close(): Promise<void>;
}

export interface ScriptedOptions {
  /** Send Node's `Keep-Alive: timeout=5` hint and close idle connections after it (default true); without, the client's own keep-alive rules. */
  readonly keepAliveHint?: boolean;
}

export async function startScripted(answer: (req: ScriptedRequest, index: number) => ScriptedAnswer, options: ScriptedOptions = {}): Promise<ScriptedUpstream> {
  const requests: ScriptedRequest[] = [];
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const recorded: ScriptedRequest = { method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers };
    requests.push(recorded);
    const a = answer(recorded, requests.length - 1);
    if (a === 'hang') return;
    if (typeof a === 'function') return a(res);
    const body = a.body ?? (a.json === undefined ? '' : JSON.stringify(a.json));
    res.writeHead(a.status ?? 200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...a.headers });
    res.end(body);
  });
  if (options.keepAliveHint === false) server.keepAliveTimeout = 0;
  server.on('connection', (s) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => ({ open: sockets.size, accepted }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
