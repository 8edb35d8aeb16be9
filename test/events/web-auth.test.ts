/**
 * The event sink is authenticated by each server's secret, not by the web config's users (a sink
 * cannot send their passwords); every other path still asks for them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createExporter } from '../../src/exporter.js';
import { WebConfigSource } from '../../src/serve/web-config-source.js';
import type { EventsConfig } from '../../src/config/types.js';
import { captureLogger, exporterConfig, serverConfig } from '../helpers/runtime.js';
import { basic, hash, WebDir } from '../helpers/web.js';

const dir = new WebDir();
afterAll(() => dir.cleanup());
const EVENTS: EventsConfig = { enabled: true, maxBodyBytes: 1 << 20, maxEventsPerBatch: 1000, dedupWindow: 1024, register: false, sinkName: 's', families: { push_blocked: false, stream_closed: false, play_per_stream: false } };

describe('the events route and the web config', () => {
  it('takes the sink secret without the web users\' password; /metrics still needs it', async () => {
    const log = captureLogger();
    const web = new WebConfigSource(dir.write('auth.yml', `basic_auth_users:\n  prometheus: ${hash('scrape-Pa55')}\n`), log.logger);
    const exporter = createExporter({
      config: exporterConfig([serverConfig('edge-1', 'http://127.0.0.1:9', { eventsSecret: 'sink-secret' })], { events: EVENTS }),
      logger: log.logger,
      version: 'test',
      guards: { webConfig: () => web.current, maxRequests: 40 },
    });
    try {
      const post = (authorization: string) => exporter.app.inject({ method: 'POST', url: '/events/edge-1', headers: { authorization }, payload: '[]' });
      expect((await post(basic('flussonic', 'sink-secret'))).statusCode).toBe(200);
      expect((await post(basic('prometheus', 'scrape-Pa55'))).statusCode).toBe(401);
      expect((await exporter.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    } finally {
      web.close();
      await exporter.stop();
      await exporter.app.close();
    }
  });
});
