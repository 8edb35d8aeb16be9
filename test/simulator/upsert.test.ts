/** Sections 4.4 (upsert with JSON Merge Patch), 4.5 (Idempotency-Key), DELETE, and GET /schema. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergePatch, startSimulator, streamConfigSchema, type RunningSimulator } from '@flussonic-exporter/simulator';
import { getJson, sendJson } from './http-client.js';

describe('PUT /streams/<name> (section 4.4)', () => {
  let sim: RunningSimulator;
  let api: string;
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', churn: false, streams: 5, sessions: 20 });
    api = `${sim.url}/streamer/api/v3`;
  });
  afterAll(() => sim.close());

  const put = (name: string, body: unknown) => sendJson('PUT', `${api}/streams/${encodeURIComponent(name)}`, body);
  const get = async (name: string) => (await getJson(`${api}/streams/${encodeURIComponent(name)}`)).body;

  it('creates a stream under the client-chosen name (201), then updates it (200)', async () => {
    const created = await put('news/eu', { title: 'EU news', inputs: [{ url: 'udp://239.1.1.1:1234' }] });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe('news/eu');
    expect(created.headers.get('location')).toBe('/streamer/api/v3/streams/news%2Feu');
    const updated = await put('news/eu', { comment: 'c' });
    expect(updated.status).toBe(200);
    expect((await get('news/eu')).title).toBe('EU news');
  });

  it('rule 1: members absent in the stored object are added', async () => {
    await put('r1', { title: 'one' });
    await put('r1', { comment: 'added' });
    const s = await get('r1');
    expect(s.title).toBe('one');
    expect(s.comment).toBe('added');
  });

  it('rule 2: members present are replaced, nested objects merged member by member', async () => {
    await put('r2', { title: 'old', dvr: { root: '/storage', expiration: 3600 } });
    await put('r2', { title: 'new', dvr: { expiration: 7200 } });
    const s = await get('r2');
    expect(s.title).toBe('new');
    expect(s.dvr).toEqual({ root: '/storage', expiration: 7200 });
  });

  it('rule 3: null removes the stored value (disables the feature)', async () => {
    await put('r3', { title: 't', dvr: { root: '/storage' }, transcoder: { video: [{ track: 1, bitrate: 1000 }] }, labels: { a: '1', b: '2' } });
    expect((await put('r3', { dvr: null, transcoder: null, labels: { a: null } })).status).toBe(200);
    const s = await get('r3');
    expect(s.dvr).toBeUndefined();
    expect(s.transcoder).toBeUndefined();
    expect(s.labels).toEqual({ b: '2' });
    expect(s.title).toBe('t');
  });

  it('rule 4: a non-object value replaces the whole stored value', async () => {
    await put('r4', { clients_timeout: 60, thumbnails: { enabled: true, sizes: [{ width: 320, height: 180 }] } });
    await put('r4', { clients_timeout: false, thumbnails: { enabled: 'ondemand' } });
    const s = await get('r4');
    expect(s.clients_timeout).toBe(false);
    expect(s.thumbnails).toEqual({ enabled: 'ondemand', sizes: [{ width: 320, height: 180 }] });
    expect(mergePatch({ a: { b: 1 } }, { a: 'flat' })).toEqual({ a: 'flat' });
    expect(mergePatch({ a: 1 }, ['x'])).toEqual(['x']);
    const res = await put('r4', ['not', 'a', 'stream']);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].source).toEqual({ pointer: '' });
  });

  it('rule 5: arrays are replaced whole, never patched', async () => {
    await put('r5', { inputs: [{ url: 'udp://239.0.0.1:1234', priority: 1 }, { url: 'hls://b.example/x.m3u8', priority: 2 }] });
    await put('r5', { inputs: [{ url: 'hls://c.example/y.m3u8' }] });
    const s = await get('r5');
    expect(s.inputs.map((i: any) => i.url)).toEqual(['hls://c.example/y.m3u8']);
    expect(s.inputs[0].priority).toBeUndefined();
  });

  it('rule 6: stored required fields need not be sent again', async () => {
    await put('r6', { inputs: [{ url: 'udp://239.0.0.2:1234' }], title: 'six' });
    const res = await put('r6', { title: 'six again' });
    expect(res.status).toBe(200);
    expect(res.body.inputs.map((i: any) => i.url)).toEqual(['udp://239.0.0.2:1234']);
  });

  it('rule 7: the identifier comes from the path, not from the body', async () => {
    const res = await put('r7', { name: 'something-else', title: 'seven' });
    expect(res.body.name).toBe('r7');
    expect(sim.world.streams.get('something-else')).toBeUndefined();
  });

  it('repeating the same PUT gives the same result', async () => {
    const body = { title: 'idem', inputs: [{ url: 'udp://239.9.9.9:1234' }], labels: { k: 'v' } };
    const a = await put('idem', body);
    const b = await put('idem', body);
    const c = await put('idem', body);
    const config = (x: any) => ({ title: x.title, inputs: x.inputs.map((i: any) => ({ url: i.url })), labels: x.labels, named_by: x.named_by, position: x.position });
    expect(config(b.body)).toEqual(config(a.body));
    expect(config(c.body)).toEqual(config(a.body));
    expect(sim.world.streams.names().filter((n) => n === 'idem')).toHaveLength(1);
  });

  it('a known field with a wrong format is a 400 with the JSON Pointer of the member', async () => {
    const cases: [unknown, string][] = [
      [{ title: 5 }, '/title'],
      [{ inputs: [{ url: 'udp://ok:1' }, { url: 'no scheme' }] }, '/inputs/1/url'],
      [{ inputs: [{ priority: 1 }] }, '/inputs/0/url'],
      [{ transcoder: { video: [{ track: 1, bframes: 9 }] } }, '/transcoder/video/0/bframes'],
      [{ transcoder: { video: [{ bitrate: 900 }] } }, '/transcoder/video/0/track'],
      [{ segment_duration: 500 }, '/segment_duration'],
      [{ playback_headers: [{ headers: { 'X-Long': 'x'.repeat(65) } }] }, '/playback_headers/0/headers/X-Long'],
      [{ labels: { 'a/b': 7 } }, '/labels/a~1b'],
      [{ thumbnails: { enabled: 'sometimes' } }, '/thumbnails/enabled'],
    ];
    for (const [body, pointer] of cases) {
      const res = await put('bad', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: any) => e.source.pointer), JSON.stringify(body)).toContain(pointer);
      expect(res.body.errors[0].status).toBe('400');
    }
    expect(sim.world.streams.get('bad')).toBeUndefined();
  });

  it('reports every wrong field, not only the first', async () => {
    const res = await put('bad2', { title: 1, comment: 2 });
    expect(res.body.errors.map((e: any) => e.source.pointer).sort()).toEqual(['/comment', '/title']);
  });

  it('ignores unknown fields, also nested ones, and read-only ones', async () => {
    const res = await put('unknown', { title: 'u', no_such_option: 1, inputs: [{ url: 'udp://239.0.0.3:1', whatever: true }], stats: { alive: false }, named_by: 'remote' });
    expect(res.status).toBe(201);
    expect(res.body.no_such_option).toBeUndefined();
    expect(res.body.inputs[0].whatever).toBeUndefined();
    expect(res.body.named_by).toBe('config');
    expect(res.body.stats.alive).toBe(true);
  });

  it('answers a body that is not JSON with 400', async () => {
    const res = await fetch(`${api}/streams/x`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"title":' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).errors[0].code).toBe('invalid_json');
  });

  it('a new stream appears in the collection, in its default order', async () => {
    await put('zz-last', { title: 'z' });
    const list = (await getJson(`${api}/streams?limit=1000&select=name,named_by,position`)).body.streams;
    expect(list.map((s: any) => s.name)).toContain('zz-last');
    const configs = list.filter((s: any) => s.named_by === 'config').map((s: any) => s.position);
    expect(configs).toEqual([...configs].sort((a: number, b: number) => a - b));
  });
});

describe('DELETE /streams/<name>', () => {
  it('answers 204 with an empty body, the stream and its sessions are gone; repeating it is the same', async () => {
    const sim = await startSimulator({ clock: 'manual', churn: false, streams: 5, sessions: 200 });
    try {
      const name = sim.world.streams.names().find((n) => sim.world.sessions.countOf(n) > 0)!;
      const url = `${sim.url}/streamer/api/v3/streams/${encodeURIComponent(name)}`;
      const res = await fetch(url, { method: 'DELETE' });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      expect((await getJson(url)).status).toBe(404);
      expect(sim.world.sessions.list().some((s) => s.name === name)).toBe(false);
      expect((await fetch(url, { method: 'DELETE' })).status).toBe(204);
    } finally {
      await sim.close();
    }
  });
});

describe('POST /streams (section 4.5)', () => {
  let sim: RunningSimulator;
  let api: string;
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', churn: false, streams: 3, sessions: 0 });
    api = `${sim.url}/streamer/api/v3`;
  });
  afterAll(() => sim.close());

  it('creates a stream with a generated name', async () => {
    const res = await sendJson('POST', `${api}/streams`, { title: 'generated', inputs: [{ url: 'fake://fake' }] });
    expect(res.status).toBe(201);
    expect(res.body.name).toMatch(/^stream-[0-9a-f]{8}$/);
    expect(res.headers.get('location')).toBe(`/streamer/api/v3/streams/${res.body.name}`);
    expect(sim.world.streams.get(res.body.name)?.title).toBe('generated');
  });

  it('without Idempotency-Key, each POST creates a new stream', async () => {
    const before = sim.world.streams.size;
    const a = await sendJson('POST', `${api}/streams`, { title: 'same' });
    const b = await sendJson('POST', `${api}/streams`, { title: 'same' });
    expect(a.body.name).not.toBe(b.body.name);
    expect(sim.world.streams.size).toBe(before + 2);
  });

  it('with a repeated Idempotency-Key, returns the first name and creates nothing more', async () => {
    const before = sim.world.streams.size;
    const a = await sendJson('POST', `${api}/streams`, { title: 'once' }, { 'idempotency-key': 'key-123' });
    const b = await sendJson('POST', `${api}/streams`, { title: 'once' }, { 'idempotency-key': 'key-123' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.name).toBe(a.body.name);
    expect(sim.world.streams.size).toBe(before + 1);
    const c = await sendJson('POST', `${api}/streams`, { title: 'once' }, { 'idempotency-key': 'key-456' });
    expect(c.body.name).not.toBe(a.body.name);
  });

  it('creating an existing stream with a client name is a 409 saying so', async () => {
    const name = sim.world.streams.names()[0]!;
    const res = await sendJson('POST', `${api}/streams`, { name, title: 'dup' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ status: '409', code: 'already_exists' });
    expect(res.body.errors[0].title).toContain('already exists');
    const fresh = await sendJson('POST', `${api}/streams`, { name: 'client/named', title: 'ok' });
    expect(fresh.status).toBe(201);
    expect(fresh.body.name).toBe('client/named');
  });

  it('validates the body like PUT', async () => {
    const res = await sendJson('POST', `${api}/streams`, { inputs: [{ url: 3 }] });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].source.pointer).toBe('/inputs/0/url');
  });
});

describe('GET /schema', () => {
  it('is an OpenAPI 3.1 document built from the definitions requests are validated with', async () => {
    const sim = await startSimulator({ clock: 'manual', streams: 1, sessions: 0, shape: 'nested' });
    try {
      const res = await getJson(`${sim.url}/streamer/api/v3/schema`);
      expect(res.status).toBe(200);
      expect(res.body.openapi).toBe('3.1.0');
      expect(res.body.info.version).toMatch(/^\d{2}\.\d{2}-/);
      expect(res.body.components.schemas.stream_config).toEqual(JSON.parse(JSON.stringify(streamConfigSchema)));
      for (const path of ['/streams', '/streams/{name}', '/sessions', '/config/stats', '/dvrs', '/schema']) expect(res.body.paths[path], path).toBeDefined();
      expect(Object.keys(res.body.paths['/streams/{name}']).sort()).toEqual(['delete', 'get', 'put']);
      const limit = res.body.paths['/streams'].get.parameters.find((p: any) => p.name === 'limit');
      expect(limit.schema).toEqual({ type: 'integer', minimum: 1 });
      // A constraint the document states is one the server enforces.
      const bframes = res.body.components.schemas.stream_config.properties.transcoder.properties.video.items.properties.bframes;
      expect(bframes.maximum).toBe(4);
      const over = await sendJson('PUT', `${sim.url}/streamer/api/v3/streams/s`, { transcoder: { video: [{ track: 1, bframes: bframes.maximum + 1 }] } });
      expect(over.status).toBe(400);
      const at = await sendJson('PUT', `${sim.url}/streamer/api/v3/streams/s`, { transcoder: { video: [{ track: 1, bframes: bframes.maximum }] } });
      expect(at.status).toBe(201);
    } finally {
      await sim.close();
    }
  });
});
