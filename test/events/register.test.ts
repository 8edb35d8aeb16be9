/**
 * events.register: the PUT each configured server gets at start, received by a tiny loopback
 * HTTP server standing in for Flussonic's API (Flussonic's side, not the exporter's code).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { registerSinks } from '../../src/events/register.js';
import type { EventsConfig } from '../../src/config/types.js';
import { captureLogger, serverConfig } from '../helpers/runtime.js';

interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

let api: Server;
let base: string;
const recorded: Recorded[] = [];
beforeAll(async () => {
  api = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      recorded.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body });
      res.statusCode = req.headers.authorization ? 200 : 403;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => api.close(() => resolve())));

const EVENTS: EventsConfig = {
  enabled: true,
  maxBodyBytes: 1 << 20,
  maxEventsPerBatch: 1000,
  dedupWindow: 1024,
  register: true,
  sinkName: 'prometheus_exporter',
  publicUrl: 'http://exporter.example:9228',
  families: { push_blocked: false, stream_closed: false, play_per_stream: false },
};

describe('registerSinks', () => {
  test('PUTs the sink with the server\'s credentials, its secret as userinfo and the only filter; logs no secret', async () => {
    const log = captureLogger();
    const servers = [
      serverConfig('edge-1', base, { eventsSecret: 'edge1-sink-secret', credentials: { kind: 'basic', username: 'admin', password: 'admin-Pa55' } }),
      serverConfig('edge-2', base, { eventsSecret: 'edge2-sink-secret' }),
      serverConfig('edge-3', base),
    ];
    await registerSinks(EVENTS, servers, log.logger);
    expect(recorded).toHaveLength(2);
    const first = recorded.find((r) => r.authorization !== undefined)!;
    expect(first.method).toBe('PUT');
    expect(first.url).toBe('/streamer/api/v3/event_sinks/prometheus_exporter');
    expect(first.authorization).toBe(`Basic ${Buffer.from('admin:admin-Pa55').toString('base64')}`);
    const body = JSON.parse(first.body) as { url: string; only: { event: string[] }[] };
    expect(body.url).toBe('http://flussonic:edge1-sink-secret@exporter.example:9228/events/edge-1');
    expect(body.only[0]!.event).toContain('source_closed');
    const lines = log.entries();
    expect(lines.filter((l) => l.msg === 'event sink registered').map((l) => l.server)).toEqual(['edge-1']);
    expect(lines.some((l) => l.server === 'edge-2' && String(l.msg).includes('403'))).toBe(true);
    expect(lines.some((l) => l.server === 'edge-3' && String(l.msg).includes('no events_secret'))).toBe(true);
    for (const secret of ['edge1-sink-secret', 'edge2-sink-secret', 'admin-Pa55']) expect(log.text()).not.toContain(secret);
  });

  test('does nothing unless events.register is on', async () => {
    recorded.length = 0;
    await registerSinks({ ...EVENTS, register: false }, [serverConfig('edge-1', base, { eventsSecret: 's' })], captureLogger().logger);
    expect(recorded).toHaveLength(0);
  });
});
