/** What each endpoint serves, in both stats shapes, on both API prefixes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { getJson, walk } from './http-client.js';

describe.each(['flat', 'nested'] as const)('endpoints (%s shape)', (shape) => {
  let sim: RunningSimulator;
  let api: string;
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', shape, streams: 60, sessions: 400, gpus: 2, dvrs: 2, seed: 7 });
    api = `${sim.url}/streamer/api/v3`;
  });
  afterAll(() => sim.close());

  it('lists every stream with its identity fields and stats, default limit 100', async () => {
    const res = await getJson(`${api}/streams`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body.streams).toHaveLength(60);
    expect(res.body.estimated_count).toBe(60);
    expect(res.body.next).toBeNull();
    expect(res.body.prev).toBeNull();
    expect(Object.keys(res.body.timing).sort()).toEqual(['filter', 'limit', 'load', 'select', 'sort']);
    for (const s of res.body.streams) {
      expect(typeof s.name).toBe('string');
      expect(typeof s.title).toBe('string');
      expect(['config', 'user', 'remote']).toContain(s.named_by);
      // Remote streams have no position: null in the 23.05 shape, left out in the 2025 one.
      if (s.named_by === 'remote') expect(s.position).toBe(shape === 'flat' ? null : undefined);
      else expect(Number.isInteger(s.position)).toBe(true);
      expect(typeof s.static).toBe('boolean');
      expect(typeof s.stats.alive).toBe('boolean');
    }
    expect(res.body.streams.some((s: any) => s.name.includes('/'))).toBe(true);
  });

  it('serves the same on the alias prefix /flussonic/api/v3', async () => {
    const a = await getJson(`${api}/streams?select=name`);
    const b = await getJson(`${sim.url}/flussonic/api/v3/streams?select=name`);
    expect(b.status).toBe(200);
    expect(b.body.streams).toEqual(a.body.streams);
  });

  it(`uses the ${shape} stats shape`, async () => {
    const { items } = await walk(`${api}/streams`, 'streams');
    const live = items.filter((s) => s.stats.alive);
    expect(live.length).toBeGreaterThan(0);
    if (shape === 'flat') {
      for (const s of items) {
        expect(Number.isInteger(s.stats.bytes_in)).toBe(true);
        expect(Number.isInteger(s.stats.client_count)).toBe(true);
        expect(Number.isInteger(s.stats.retry_count)).toBe(true);
        expect(Number.isInteger(s.stats.input_error_rate)).toBe(true);
        expect(Number.isInteger(s.stats.out_bandwidth)).toBe(true);
        expect(s.stats.input).toBeUndefined();
        for (const input of s.inputs) expect(Number.isInteger(input.stats.bytes)).toBe(true);
        for (const push of s.pushes ?? []) expect(Number.isInteger(push.stats.bytes)).toBe(true);
      }
    } else {
      for (const s of items) {
        expect(s.stats.bytes_in).toBeUndefined();
        expect(s.stats.client_count).toBeUndefined();
        expect(Number.isInteger(s.stats.online_clients)).toBe(true);
        expect(Number.isInteger(s.stats.output_bandwidth)).toBe(true);
        expect(Number.isInteger(s.stats.input.bytes)).toBe(true);
        expect(Number.isInteger(s.stats.input.input_switches)).toBe(true);
        expect(Object.keys(s.stats.input).some((k) => k.startsWith('errors_'))).toBe(true);
        expect(s.stats.inputs).toHaveLength(s.inputs.length);
        // As in the 2025 example, each input's runtime is also in inputs[i].stats: the same object.
        s.inputs.forEach((input: any, i: number) => expect(input.stats).toEqual(s.stats.inputs[i]));
        if (s.pushes) expect(s.stats.push).toHaveLength(s.pushes.length);
      }
      const transcoded = items.filter((s) => s.transcoder);
      expect(transcoded.length).toBeGreaterThan(0);
      for (const s of transcoded) {
        expect(s.stats.transcoder.qualities).toBe(s.transcoder.video.length);
        expect(s.stats.transcoder.tracks.length).toBe(s.transcoder.video.length + 1);
      }
    }
  });

  it('reads one stream by name, with %2F for a / in the name, and 404 for an absent one', async () => {
    const name = sim.world.streams.names().find((n) => n.includes('/'))!;
    const res = await getJson(`${api}/streams/${encodeURIComponent(name)}`);
    expect(res.status).toBe(200);
    expect(res.body.name).toBe(name);
    const sel = await getJson(`${api}/streams/${encodeURIComponent(name)}?select=name,stats.alive`);
    expect(sel.body).toEqual({ name, stats: { alive: (sim.world.streams.get(name)!.stats as { alive: boolean }).alive } });
    const missing = await getJson(`${api}/streams/no-such-stream`);
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0]).toMatchObject({ status: '404', code: 'not_found' });
  });

  it('lists sessions with the section 2.4 fields, name = stream name', async () => {
    const res = await getJson(`${api}/sessions?limit=1000`);
    expect(res.status).toBe(200);
    expect(res.body.sessions).toHaveLength(sim.world.sessions.size);
    const names = new Set(sim.world.streams.names());
    for (const s of res.body.sessions) {
      expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(names.has(s.name)).toBe(true);
      expect(typeof s.ip).toBe('string');
      expect(typeof s.proto).toBe('string');
      expect(s.opened_at).toBeGreaterThanOrEqual(1e12);
      expect(Number.isInteger(s.bytes)).toBe(true);
      expect(typeof s.country).toBe('string');
      expect(typeof s.dvr).toBe('boolean');
      expect(typeof s.secure).toBe('boolean');
      expect(typeof s.token).toBe('string');
      expect(typeof s.user_agent).toBe('string');
      expect(s.closed_at).toBeUndefined();
    }
    expect(res.body.sessions.some((s: any) => s.segments_container)).toBe(true);
    expect(res.body.sessions.some((s: any) => s.manifest_type)).toBe(true);
  });

  it('counts clients per stream as the open sessions on it', async () => {
    const { items } = await walk(`${api}/streams`, 'streams', { select: 'name,stats' });
    for (const s of items) {
      const clients = shape === 'flat' ? s.stats.client_count : s.stats.online_clients;
      expect(clients, s.name).toBe(sim.world.sessions.countOf(s.name));
    }
  });

  it('serves server stats with one transcoder device per GPU', async () => {
    const res = await getJson(`${api}/config/stats`);
    expect(res.status).toBe(200);
    const st = res.body;
    expect(st.total_streams).toBe(60);
    expect(st.total_clients).toBe(sim.world.sessions.size);
    expect(st.streamer_status).toBe('running');
    expect(st.transcoder_devices).toHaveLength(2);
    for (const d of st.transcoder_devices) {
      expect(Number.isInteger(d.id)).toBe(true);
      for (const k of ['gpu_temp', 'gpu_enc', 'gpu_dec', 'gpu_sm', 'memTotal', 'memUsed', 'memFree']) expect(Number.isInteger(d[k]), k).toBe(true);
      expect(d.memFree).toBe(d.memTotal - d.memUsed);
    }
    for (const k of ['cpu_usage', 'memory_usage', 'scheduler_load', 'uptime', 'input_kbit', 'output_kbit', 'online_streams']) expect(Number.isInteger(st[k]), k).toBe(true);
    expect(st.partitions.length).toBeGreaterThan(0);
  });

  it('lists DVR storages with disk stats; DVR-level stats in the nested shape only', async () => {
    const res = await getJson(`${api}/dvrs`);
    expect(res.status).toBe(200);
    expect(res.body.dvrs).toHaveLength(2);
    for (const d of res.body.dvrs) {
      expect(typeof d.name).toBe('string');
      expect(typeof d.root).toBe('string');
      for (const disk of d.disks) expect(Number.isInteger(disk.stats.size)).toBe(true);
      if (shape === 'nested') {
        expect(d.stats.size).toBeGreaterThan(d.stats.used);
        expect(Object.keys(d.stats.errors)).toContain('enospc');
      } else {
        expect(d.stats).toBeUndefined();
      }
    }
    const one = await getJson(`${api}/dvrs/dvr1`);
    expect(one.body.name).toBe('dvr1');
  });

  it('answers an unknown path with 404 and the error structure', async () => {
    const res = await getJson(`${api}/nothing/here`);
    expect(res.status).toBe(404);
    expect(res.body.errors[0].status).toBe('404');
    expect((await getJson(`${sim.url}/other`)).status).toBe(404);
  });
});

describe('options', () => {
  it('omits transcoder_devices without GPUs', async () => {
    const sim = await startSimulator({ clock: 'manual', streams: 3, sessions: 0, gpus: 0 });
    try {
      const res = await getJson(`${sim.url}/streamer/api/v3/config/stats`);
      expect(res.body.transcoder_devices).toBeUndefined();
    } finally {
      await sim.close();
    }
  });

  it('rejects nonsense options with a clear message', async () => {
    await expect(startSimulator({ streams: -1 })).rejects.toThrow(/streams/);
    await expect(startSimulator({ shape: 'round' as never })).rejects.toThrow(/shape/);
    await expect(startSimulator({ clock: 'sundial' as never })).rejects.toThrow(/clock/);
  });

  it('is deterministic from the seed', async () => {
    const a = await startSimulator({ clock: 'manual', streams: 20, sessions: 50, seed: 3 });
    const b = await startSimulator({ clock: 'manual', streams: 20, sessions: 50, seed: 3 });
    try {
      a.advance(90_000);
      b.advance(90_000);
      const pa = await getJson(`${a.url}/streamer/api/v3/sessions?limit=1000`);
      const pb = await getJson(`${b.url}/streamer/api/v3/sessions?limit=1000`);
      expect(pa.body.sessions).toEqual(pb.body.sessions);
      expect(a.world.streams.list()).toEqual(b.world.streams.list());
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
