/** Section 4.3: the collection query language, rule by rule, against the simulator's truth. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { getJson, walk } from './http-client.js';

describe('collection queries (section 4.3)', () => {
  let sim: RunningSimulator;
  let api: string;
  let all: any[];
  let allStreams: any[];
  beforeAll(async () => {
    sim = await startSimulator({ clock: 'manual', churn: false, streams: 80, sessions: 700, seed: 11 });
    api = `${sim.url}/streamer/api/v3`;
    all = (await walk(`${api}/sessions`, 'sessions', { limit: '1000' })).items;
    allStreams = (await walk(`${api}/streams`, 'streams', { limit: '1000' })).items;
  });
  afterAll(() => sim.close());

  const sessions = async (q: string) => (await getJson(`${api}/sessions?limit=1000&${q}`)).body;
  const ids = (list: any[]) => list.map((s) => s.id);

  describe('filters', () => {
    it('equality on a string field', async () => {
      const body = await sessions('proto=hls');
      expect(ids(body.sessions)).toEqual(ids(all.filter((s) => s.proto === 'hls')));
      expect(body.sessions.length).toBeGreaterThan(0);
    });

    it('a comma list means membership', async () => {
      const body = await sessions('proto=dash,rtmp');
      expect(ids(body.sessions)).toEqual(ids(all.filter((s) => s.proto === 'dash' || s.proto === 'rtmp')));
    });

    it('equality on a boolean and on a number', async () => {
      expect(ids((await sessions('secure=false')).sessions)).toEqual(ids(all.filter((s) => s.secure === false)));
      const some = all[5];
      expect(ids((await sessions(`bytes=${some.bytes}`)).sessions)).toEqual([some.id]);
    });

    it('_ne excludes the listed values', async () => {
      expect(ids((await sessions('proto_ne=hls,dash')).sessions)).toEqual(ids(all.filter((s) => s.proto !== 'hls' && s.proto !== 'dash')));
    });

    it('_lt _lte _gt _gte compare numbers numerically', async () => {
      const sorted = all.map((s) => s.bytes).sort((a, b) => a - b);
      const pivot = sorted[Math.floor(sorted.length / 2)];
      expect(ids((await sessions(`bytes_lt=${pivot}`)).sessions)).toEqual(ids(all.filter((s) => s.bytes < pivot)));
      expect(ids((await sessions(`bytes_lte=${pivot}`)).sessions)).toEqual(ids(all.filter((s) => s.bytes <= pivot)));
      expect(ids((await sessions(`bytes_gt=${pivot}`)).sessions)).toEqual(ids(all.filter((s) => s.bytes > pivot)));
      expect(ids((await sessions(`bytes_gte=${pivot}`)).sessions)).toEqual(ids(all.filter((s) => s.bytes >= pivot)));
      // 9 < 10 numerically although "9" > "10" as text: a string comparison would fail here.
      expect((await sessions('bytes_gt=9')).sessions.length).toBe(all.filter((s) => s.bytes > 9).length);
    });

    it('_lt on strings compares as text', async () => {
      expect(ids((await sessions('country_lt=fr')).sessions)).toEqual(ids(all.filter((s) => s.country < 'fr')));
    });

    it('_is=null and _is_not=null test absence', async () => {
      const noContainer = all.filter((s) => s.segments_container === undefined);
      expect(noContainer.length).toBeGreaterThan(0);
      expect(ids((await sessions('segments_container_is=null')).sessions)).toEqual(ids(noContainer));
      expect(ids((await sessions('segments_container_is_not=null')).sessions)).toEqual(ids(all.filter((s) => s.segments_container !== undefined)));
    });

    it('_like matches a substring of string fields only', async () => {
      expect(ids((await sessions('name_like=sport/')).sessions)).toEqual(ids(all.filter((s) => s.name.includes('sport/'))));
      expect((await sessions('bytes_like=1')).sessions).toEqual([]);
    });

    it('dotted fields reach nested values', async () => {
      const res = await getJson(`${api}/streams?limit=1000&stats.alive=true&select=name`);
      expect(res.body.streams.map((s: any) => s.name)).toEqual(allStreams.filter((s) => s.stats.alive).map((s) => s.name));
      const hd = await getJson(`${api}/streams?limit=1000&stats.bitrate_gte=3000&select=name`);
      expect(hd.body.streams.map((s: any) => s.name)).toEqual(allStreams.filter((s) => s.stats.bitrate >= 3000).map((s) => s.name));
    });

    it('several filters are combined with AND', async () => {
      const body = await sessions('proto=hls&secure=true&country=us,de');
      const want = all.filter((s) => s.proto === 'hls' && s.secure === true && (s.country === 'us' || s.country === 'de'));
      expect(want.length).toBeGreaterThan(0);
      expect(ids(body.sessions)).toEqual(ids(want));
    });

    it('q searches name and title', async () => {
      const res = await getJson(`${api}/streams?limit=1000&q=sport&select=name`);
      const want = allStreams.filter((s) => s.name.includes('sport') || s.title.includes('sport')).map((s) => s.name);
      expect(want.length).toBeGreaterThan(0);
      expect(res.body.streams.map((s: any) => s.name)).toEqual(want);
    });

    it('estimated_count counts the filtered collection, not the page', async () => {
      const res = await getJson(`${api}/sessions?proto=hls&limit=3`);
      expect(res.body.sessions).toHaveLength(3);
      expect(res.body.estimated_count).toBe(all.filter((s) => s.proto === 'hls').length);
    });
  });

  describe('sort', () => {
    it('is ascending by default and descending with a leading -', async () => {
      const asc = (await sessions('sort=bytes')).sessions.map((s: any) => s.bytes);
      expect(asc).toEqual([...asc].sort((a, b) => a - b));
      const desc = (await sessions('sort=-bytes')).sessions.map((s: any) => s.bytes);
      expect(desc).toEqual([...desc].sort((a, b) => b - a));
    });

    it('appends the implicit key id to sessions, so ties are broken by id', async () => {
      const list = (await sessions('sort=proto')).sessions;
      const expected = [...all].sort((a, b) => (a.proto < b.proto ? -1 : a.proto > b.proto ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      expect(ids(list)).toEqual(ids(expected));
    });

    it('orders streams by named_by (config, user, remote), position, name by default', async () => {
      const rank: Record<string, number> = { config: 0, user: 1, remote: 2 };
      const names = allStreams.map((s) => s.name);
      const expected = [...allStreams].sort((a, b) => rank[a.named_by]! - rank[b.named_by]! || (a.position ?? -1) - (b.position ?? -1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      expect(names).toEqual(expected.map((s) => s.name));
      expect(new Set(allStreams.map((s) => s.named_by)).size).toBeGreaterThan(1);
    });

    it('appends the implicit stream keys after an explicit one (-named_by, then position, name)', async () => {
      const res = await getJson(`${api}/streams?limit=1000&sort=-named_by&select=name,named_by,position`);
      const rank: Record<string, number> = { config: 0, user: 1, remote: 2 };
      const want = [...allStreams].sort((a, b) => rank[b.named_by]! - rank[a.named_by]! || (a.position ?? -1) - (b.position ?? -1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      expect(res.body.streams.map((s: any) => s.name)).toEqual(want.map((s) => s.name));
      expect(res.body.streams[0].named_by).toBe('remote');
    });

    it('sorts on a nested field and keeps the implicit keys after it', async () => {
      const res = await getJson(`${api}/streams?limit=1000&sort=-stats.bitrate&select=name,stats.bitrate`);
      const rates = res.body.streams.map((s: any) => s.stats.bitrate);
      expect(rates).toEqual([...rates].sort((a: number, b: number) => b - a));
    });

    it('sorts the whole collection before limiting', async () => {
      const top = (await getJson(`${api}/sessions?sort=-bytes&limit=5&select=id,bytes`)).body.sessions;
      const want = [...all].sort((a, b) => b.bytes - a.bytes || (a.id < b.id ? -1 : 1)).slice(0, 5);
      expect(ids(top)).toEqual(ids(want));
    });
  });

  describe('limit', () => {
    it('defaults to 100', async () => {
      const res = await getJson(`${api}/sessions`);
      expect(res.body.sessions).toHaveLength(100);
      expect(res.body.next).not.toBeNull();
    });

    it('returns at most limit items', async () => {
      expect((await getJson(`${api}/sessions?limit=7`)).body.sessions).toHaveLength(7);
    });

    it.each(['abc', '1.5', '-3', '0', ''])('rejects limit=%j with 400 naming the parameter', async (value) => {
      const res = await getJson(`${api}/sessions?limit=${value}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ status: '400', source: { parameter: 'limit' } });
    });

    it('has no offset parameter: offset is just a filter on a field that does not exist', async () => {
      expect((await getJson(`${api}/sessions?offset=10`)).body.sessions).toEqual([]);
    });
  });

  describe('cursor', () => {
    it('walks the whole collection page by page, next null on the last page, prev null on the first', async () => {
      const first = await getJson(`${api}/sessions?limit=250`);
      expect(first.body.prev).toBeNull();
      const seen: string[] = ids(first.body.sessions);
      let next = first.body.next;
      let last: any = first.body;
      while (next) {
        last = (await getJson(`${api}/sessions?limit=250&cursor=${next}`)).body;
        expect(last.prev).not.toBeNull();
        seen.push(...ids(last.sessions));
        next = last.next;
      }
      expect(last.next).toBeNull();
      expect(seen).toEqual(ids(all));
    });

    it('is an extra filter: it keeps the filters and sort of the walk', async () => {
      const page1 = (await getJson(`${api}/sessions?proto=hls&sort=-bytes&limit=20`)).body;
      const page2 = (await getJson(`${api}/sessions?proto=hls&sort=-bytes&limit=20&cursor=${page1.next}`)).body;
      const want = all.filter((s) => s.proto === 'hls').sort((a, b) => b.bytes - a.bytes || (a.id < b.id ? -1 : 1));
      expect(ids([...page1.sessions, ...page2.sessions])).toEqual(ids(want.slice(0, 40)));
    });

    it('continues the sort it was made for when the next request gives only the cursor', async () => {
      const page1 = (await getJson(`${api}/sessions?sort=-bytes&limit=10`)).body;
      const page2 = (await getJson(`${api}/sessions?limit=10&cursor=${page1.next}`)).body;
      const want = [...all].sort((a, b) => b.bytes - a.bytes || (a.id < b.id ? -1 : 1));
      expect(ids(page2.sessions)).toEqual(ids(want.slice(10, 20)));
    });

    it('goes back with prev', async () => {
      const page1 = (await getJson(`${api}/sessions?limit=30`)).body;
      const page2 = (await getJson(`${api}/sessions?limit=30&cursor=${page1.next}`)).body;
      const back = (await getJson(`${api}/sessions?limit=30&cursor=${page2.prev}`)).body;
      expect(ids(back.sessions)).toEqual(ids(page1.sessions));
      expect(back.prev).toBeNull();
    });

    it('encodes values, not positions: deleting earlier items does not skip later ones', async () => {
      const s2 = await startSimulator({ clock: 'manual', churn: false, streams: 10, sessions: 100, seed: 5 });
      try {
        const base = `${s2.url}/streamer/api/v3/sessions`;
        const page1 = (await getJson(`${base}?limit=40`)).body;
        for (const s of page1.sessions.slice(0, 20)) s2.world.sessions.close(s.id);
        const page2 = (await getJson(`${base}?limit=40&cursor=${page1.next}`)).body;
        const truth = s2.world.sessions.list().map((s) => s.id);
        expect(ids(page2.sessions)).toEqual(truth.slice(20, 60));
      } finally {
        await s2.close();
      }
    });

    it.each(['garbage!', 'eyJub3QiOiJvdXJzIn0', Buffer.from('{"s":"id","v":[],"d":"n"}').toString('base64url')])('rejects the undecodable cursor %j with 400', async (cursor) => {
      const res = await getJson(`${api}/sessions?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].source).toEqual({ parameter: 'cursor' });
    });

    it('rejects a cursor used with another sort', async () => {
      const page1 = (await getJson(`${api}/sessions?sort=bytes&limit=10`)).body;
      const res = await getJson(`${api}/sessions?sort=proto&limit=10&cursor=${page1.next}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].source.parameter).toBe('cursor');
    });
  });

  describe('select', () => {
    it('returns only the listed fields', async () => {
      const res = await getJson(`${api}/sessions?limit=50&select=id,bytes,proto`);
      for (const s of res.body.sessions) expect(Object.keys(s).sort()).toEqual(['bytes', 'id', 'proto']);
    });

    it('addresses nested fields with dots, also through arrays', async () => {
      const res = await getJson(`${api}/streams?limit=1000&select=name,stats.alive,stats.media_info.tracks.content,inputs.url`);
      for (const s of res.body.streams) {
        const truth = allStreams.find((t) => t.name === s.name);
        expect(Object.keys(s).sort()).toEqual(['inputs', 'name', 'stats']);
        expect(Object.keys(s.stats).sort()).toEqual(['alive', 'media_info']);
        expect(s.stats.media_info.tracks).toEqual(truth.stats.media_info.tracks.map((t: any) => ({ content: t.content })));
        expect(s.inputs).toEqual(truth.inputs.map((i: any) => ({ url: i.url })));
      }
    });

    it('omits fields an item does not have', async () => {
      const res = await getJson(`${api}/sessions?limit=1000&select=id,segments_container`);
      const without = res.body.sessions.filter((s: any) => !('segments_container' in s));
      expect(without.length).toBe(all.filter((s) => s.segments_container === undefined).length);
    });

    it('rejects a malformed field with 400', async () => {
      const res = await getJson(`${api}/sessions?select=id,bad..field`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].source.parameter).toBe('select');
    });
  });

  describe('bad parameters', () => {
    it.each([
      ['secure_is=5', 'secure_is'],
      ['secure_is_not=true', 'secure_is_not'],
      ['sort=-', 'sort'],
      ['sort=bytes,bytes', 'sort'],
      ['foo[bar]=1', 'foo[bar]'],
    ])('%s -> 400 with source.parameter %s', async (q, parameter) => {
      const res = await getJson(`${api}/sessions?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ status: '400', source: { parameter } });
      expect(typeof res.body.errors[0].title).toBe('string');
    });
  });
});

describe('a cursor walk over a collection that changes between pages', () => {
  it('terminates, never repeats an item and sees every item that stayed', async () => {
    const sim = await startSimulator({ clock: 'manual', streams: 40, sessions: 3000, seed: 21 });
    try {
      const base = `${sim.url}/streamer/api/v3/sessions`;
      const before = new Set(sim.world.sessions.list().map((s) => s.id as string));
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `limit=100&select=id,bytes${cursor ? `&cursor=${cursor}` : ''}`;
        const body: any = (await getJson(`${base}?${q}`)).body;
        seen.push(...body.sessions.map((s: any) => s.id));
        cursor = body.next;
        // Between pages: churn closes and opens sessions (hundreds per step at this size).
        sim.advance(20_000);
        pages++;
        expect(pages).toBeLessThan(200);
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      const after = new Set(sim.world.sessions.list().map((s) => s.id as string));
      const stayed = [...before].filter((id) => after.has(id));
      expect(stayed.length).toBeLessThan(before.size);
      const seenSet = new Set(seen);
      for (const id of stayed) expect(seenSet.has(id)).toBe(true);
    } finally {
      await sim.close();
    }
  });

  it('also terminates when the sort key itself changes between pages', async () => {
    const sim = await startSimulator({ clock: 'manual', streams: 20, sessions: 1000, seed: 22 });
    try {
      const base = `${sim.url}/streamer/api/v3/sessions`;
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `limit=50&sort=-bytes&select=id${cursor ? `&cursor=${cursor}` : ''}`;
        const body: any = (await getJson(`${base}?${q}`)).body;
        seen.push(...body.sessions.map((s: any) => s.id));
        cursor = body.next;
        sim.advance(5_000);
        expect(++pages).toBeLessThan(200);
      } while (cursor);
      // Bytes grow, so items can move ahead of the cursor and be missed (rule 4), but never twice.
      expect(new Set(seen).size).toBe(seen.length);
    } finally {
      await sim.close();
    }
  });
});
