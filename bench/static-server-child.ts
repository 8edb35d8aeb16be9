/**
 * The static server of the scrape floor (bench/threads.ts): every GET answered with the same
 * `bytes` bytes from memory. It runs in a process of its own, apart from the benchmark's process,
 * whose event loop and heap are the simulator's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerRequests } from './child-io.js';

export type StaticServerRequest = { readonly type: 'listen'; readonly bytes: number } | { readonly type: 'exit' };

let server: Server | undefined;

answerRequests<StaticServerRequest>(async (message) => {
  if (message.type === 'exit') {
    server?.closeAllConnections();
    process.exit(0);
  }
  if (server) throw new Error('the static server is already listening');
  const body = Buffer.alloc(Math.max(1, Math.round(message.bytes)), 0x61);
  const s = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve, reject) => s.once('error', reject).listen(0, '127.0.0.1', resolve));
  server = s;
  return { port: (s.address() as AddressInfo).port };
});
