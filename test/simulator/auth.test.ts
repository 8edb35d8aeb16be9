/** Section 5: view_auth / edit_auth, Basic or Bearer (base64 of user:password); 401 and 403 with the error structure. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { basic, bearer, getJson, sendJson } from './http-client.js';

const VIEW = { user: 'viewer', password: 'v-secret' };
const EDIT = { user: 'admin', password: 'e-secret' };

describe('auth with view_auth and edit_auth', () => {
  let sim: RunningSimulator;
  let api: string;
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', streams: 5, sessions: 10, viewAuth: VIEW, editAuth: EDIT });
    api = `${sim.url}/streamer/api/v3`;
  });
  afterAll(() => sim.close());

  it('answers a read without credentials with 401, the error structure and a Basic challenge', async () => {
    const res = await getJson(`${api}/streams`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(res.body.errors[0]).toMatchObject({ status: '401', code: 'unauthorized' });
    expect(typeof res.body.errors[0].title).toBe('string');
  });

  it('answers wrong credentials with 401', async () => {
    for (const auth of [basic(VIEW.user, 'nope'), basic('nobody', VIEW.password), bearer(EDIT.user, 'x'), 'Bearer not-base64-credentials', 'Digest abc']) {
      const res = await getJson(`${api}/config/stats`, { headers: { authorization: auth } });
      expect(res.status, auth).toBe(401);
    }
  });

  it('lets view or edit credentials read, as Basic or as Bearer of base64(user:password)', async () => {
    for (const auth of [basic(VIEW.user, VIEW.password), bearer(VIEW.user, VIEW.password), basic(EDIT.user, EDIT.password), bearer(EDIT.user, EDIT.password)]) {
      const res = await getJson(`${api}/sessions?limit=1`, { headers: { authorization: auth } });
      expect(res.status, auth).toBe(200);
    }
  });

  it('refuses a change made with read credentials with 403, and takes it with edit credentials', async () => {
    const denied = await sendJson('PUT', `${api}/streams/auth-test`, { inputs: [{ url: 'fake://fake' }] }, { authorization: basic(VIEW.user, VIEW.password) });
    expect(denied.status).toBe(403);
    expect(denied.body.errors[0]).toMatchObject({ status: '403', code: 'forbidden' });
    expect(sim.world.streams.get('auth-test')).toBeUndefined();

    const anonymous = await sendJson('DELETE', `${api}/streams/auth-test`, undefined);
    expect(anonymous.status).toBe(401);

    const ok = await sendJson('PUT', `${api}/streams/auth-test`, { inputs: [{ url: 'fake://fake' }] }, { authorization: bearer(EDIT.user, EDIT.password) });
    expect(ok.status).toBe(201);
    expect(sim.world.streams.get('auth-test')).toBeDefined();
  });

  it('protects the alias prefix /flussonic/api/v3 the same way', async () => {
    expect((await getJson(`${sim.url}/flussonic/api/v3/streams`)).status).toBe(401);
    expect((await getJson(`${sim.url}/flussonic/api/v3/streams`, { headers: { authorization: basic(VIEW.user, VIEW.password) } })).status).toBe(200);
  });
});

describe('auth with only view_auth', () => {
  it('takes the view credentials for changes too (there is nothing stronger)', async () => {
    const sim = await startSimulator({ clock: 'manual', streams: 2, sessions: 0, viewAuth: VIEW });
    try {
      const api = `${sim.url}/streamer/api/v3`;
      expect((await sendJson('PUT', `${api}/streams/x`, { title: 'x' })).status).toBe(401);
      expect((await sendJson('PUT', `${api}/streams/x`, { title: 'x' }, { authorization: basic(VIEW.user, VIEW.password) })).status).toBe(201);
    } finally {
      await sim.close();
    }
  });
});

describe('no auth configured', () => {
  it('serves reads and changes without credentials', async () => {
    const sim = await startSimulator({ clock: 'manual', streams: 2, sessions: 0 });
    try {
      const api = `${sim.url}/streamer/api/v3`;
      expect((await getJson(`${api}/streams`)).status).toBe(200);
      expect((await sendJson('PUT', `${api}/streams/y`, { title: 'y' })).status).toBe(201);
    } finally {
      await sim.close();
    }
  });
});

describe('operations log auth', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', streams: 0, sessions: 0, catenaKeys: [{ key: 'key-a', portal: 'portal-a' }] });
  });
  afterAll(() => sim.close());

  it('answers a missing or unknown X-Auth-Token with 401 and the error structure', async () => {
    for (const headers of [{}, { 'x-auth-token': 'wrong' }, { authorization: basic('key-a', '') }] as Record<string, string>[]) {
      const res = await getJson(`${sim.url}/tv-management/api/v1/operations`, { headers });
      expect(res.status).toBe(401);
      expect(res.body.errors[0]).toMatchObject({ status: '401', code: 'unauthorized' });
    }
  });

  it('serves a known key', async () => {
    const res = await getJson(`${sim.url}/tv-management/api/v1/operations`, { headers: { 'x-auth-token': 'key-a' } });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.operations)).toBe(true);
  });
});
