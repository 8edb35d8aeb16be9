/** The `afterFirstPage` fault modifier: a walk whose first page is fine and whose next pages fail. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFaultSpec, startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { getJson } from './http-client.js';

describe('fault afterFirstPage', () => {
  let sim: RunningSimulator;
  let api: string;
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', streams: 5, sessions: 30 });
    api = `${sim.url}/streamer/api/v3`;
  });
  afterAll(() => sim.close());

  it('serves the first page and applies the fault to pages asked for with a cursor', async () => {
    sim.faults.set('/sessions', { status: 500, afterFirstPage: true });
    const first = await getJson<{ sessions: unknown[]; next: string }>(`${api}/sessions?limit=10&select=id`);
    expect(first.status).toBe(200);
    expect(first.body.sessions).toHaveLength(10);
    const second = await getJson(`${api}/sessions?limit=10&select=id&cursor=${encodeURIComponent(first.body.next)}`);
    expect(second.status).toBe(500);
    sim.faults.clear();
    expect((await getJson(`${api}/sessions?limit=10&select=id&cursor=${encodeURIComponent(first.body.next)}`)).status).toBe(200);
  });

  it('is accepted by the CLI fault spec as a flag', () => {
    expect(parseFaultSpec('truncateBody,afterFirstPage')).toEqual({ truncateBody: true, afterFirstPage: true });
  });
});
