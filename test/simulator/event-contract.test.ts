/**
 * Contract of the simulator's events: over hours of churn every event it posts validates against
 * the 23.05 OpenAPI schema of its own kind (chosen by its `event` name), the ids count up without
 * gaps, the events agree with the polled state (sessions opened minus closed, each stream's last
 * source event and its `alive`), and /event_sinks answers match event_sinks_list and event_sink_config.
 */
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_EVENT_KINDS, startSimulator, type RunningSimulator, type SimEvent } from '@flussonic-exporter/simulator';
import { getJson } from './http-client.js';
import { specPath, validatorFor, type Schema } from './openapi-validator.js';

describe.skipIf(!specPath)('events and event_sinks against the 23.05 OpenAPI', () => {
  let sim: RunningSimulator;
  let server: Server;
  const events: SimEvent[] = [];
  let openAtStart = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        events.push(...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as SimEvent[]));
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    sim = await startSimulator({ clock: 'manual', streams: 40, sessions: 200, gpus: 2, seed: 5, catenaHistory: false, eventSinks: [{ name: 'all', url: `http://127.0.0.1:${port}/events/sim`, throttle_delay: 2 }] });
    openAtStart = sim.world.sessions.size;
    sim.world.streams.put('pushed', { inputs: [{ url: 'rtmp://origin.example.net/live/a' }], pushes: [{ url: 'rtmp://cdn.example.net/live/a' }] });
    sim.world.streams.blockPush('pushed', 0, 20_000);
    sim.world.server.deviceShortage(1, 'manual_resource_allocation');
    sim.world.streams.dropSource(sim.world.streams.names()[0]!, 4000);
    for (let i = 0; i < 72; i++) {
      sim.advance(5 * 60_000);
      await sim.sinks.settled();
    }
    sim.world.streams.delete('pushed');
    sim.advance(5000);
    await sim.sinks.settled();
  });
  afterAll(async () => {
    await sim?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('posts each kind, every event valid for the schema of its kind, ids 1..N in order', () => {
    const spec = JSON.parse(readFileSync(specPath!, 'utf8')) as Schema;
    // Not vacuous: a field of the wrong type fails its kind's schema.
    expect(validatorFor(spec, 'source_closed')({ event: 'source_closed', reason: 'lost' })).toBe(false);
    expect(validatorFor(spec, 'play_closed')({ event: 'play_closed', duration: '7' })).toBe(false);
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(SIM_EVENT_KINDS));
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    for (const kind of SIM_EVENT_KINDS) {
      const validate = validatorFor(spec, kind);
      for (const event of events.filter((e) => e.event === kind)) {
        if (!validate(event)) throw new Error(`${kind} ${JSON.stringify(event)}: ${JSON.stringify(validate.errors)}`);
      }
    }
  });

  it('agrees with the polled state: open sessions, and each stream up exactly when its last source event says so', () => {
    const count = (kind: string) => events.filter((e) => e.event === kind).length;
    expect(count('play_opened')).toBeGreaterThan(100);
    expect(openAtStart + count('play_opened') - count('play_closed')).toBe(sim.world.sessions.size);
    const last = new Map<string, string>();
    for (const e of events) if (e.event.startsWith('source_')) last.set(e.media as string, e.event);
    expect(last.size).toBeGreaterThan(0);
    for (const [stream, kind] of last) {
      const doc = sim.world.streams.get(stream);
      if (!doc) continue;
      expect([stream, (doc.stats as { alive: boolean }).alive]).toEqual([stream, kind !== 'source_closed']);
    }
  });

  it('serves /event_sinks as event_sinks_list and /event_sinks/<name> as event_sink_config', async () => {
    const spec = JSON.parse(readFileSync(specPath!, 'utf8')) as Schema;
    const list = await getJson(`${sim.url}/streamer/api/v3/event_sinks`);
    const one = await getJson(`${sim.url}/streamer/api/v3/event_sinks/all`);
    for (const [name, body] of [['event_sinks_list', list.body], ['event_sink_config', one.body]] as const) {
      const validate = validatorFor(spec, name);
      if (!validate(body)) throw new Error(`${name}: ${JSON.stringify(validate.errors)}`);
    }
    expect(list.body.event_sinks).toEqual([one.body]);
  });
});
