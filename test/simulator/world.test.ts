/** The world lives: driven by the manual clock, deterministically, without sleeping. */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_START_TIME, startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { getJson, walk } from './http-client.js';

const sims: RunningSimulator[] = [];
async function start(options: Parameters<typeof startSimulator>[0]): Promise<RunningSimulator> {
  const sim = await startSimulator({ clock: 'manual', ...options });
  sims.push(sim);
  return sim;
}
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

const stream = (sim: RunningSimulator, name: string) => sim.world.streams.get(name) as any;

describe('time', () => {
  it('starts a manual clock at 2026-01-01 (or startTime) and moves only with advance()', async () => {
    const sim = await start({ streams: 2, sessions: 0 });
    expect(sim.now()).toBe(DEFAULT_START_TIME);
    sim.advance(1500);
    expect(sim.now()).toBe(DEFAULT_START_TIME + 1500);
    const other = await start({ streams: 1, sessions: 0, startTime: Date.UTC(2030, 0, 1) });
    expect(other.now()).toBe(Date.UTC(2030, 0, 1));
    expect(() => sim.advance(-1)).toThrow(RangeError);
    expect((await getJson(`${sim.url}/streamer/api/v3/config/stats`)).body.now).toBe(DEFAULT_START_TIME + 1500);
  });

  it('lets a real clock jump ahead too', async () => {
    const sim = await startSimulator({ clock: 'real', streams: 2, sessions: 10 });
    sims.push(sim);
    const before = sim.now();
    sim.advance(3600_000);
    expect(sim.now() - before).toBeGreaterThanOrEqual(3600_000);
  });
});

describe.each(['flat', 'nested'] as const)('counters (%s)', (shape) => {
  it('grow with bitrate: stream input bytes, session bytes, push bytes', async () => {
    const sim = await start({ shape, streams: 30, sessions: 200, churn: false, seed: 2 });
    const name = sim.world.streams.names().find((n) => (stream(sim, n).pushes?.length ?? 0) > 0 && stream(sim, n).stats.alive)!;
    const s0 = structuredClone(stream(sim, name));
    const inBytes = (s: any) => (shape === 'flat' ? s.stats.bytes_in : s.stats.input.bytes);
    const pushBytes = (s: any) => (shape === 'flat' ? s.pushes[0].stats.bytes : s.stats.push[0].bytes);
    const sessions0 = new Map(sim.world.sessions.list().map((s) => [s.id, s.bytes as number]));
    sim.advance(10_000);
    const s1 = stream(sim, name);
    const kbps = s1.stats.bitrate;
    // 10 s at the current bitrate (kbit/s): bytes = kbps * 125 * 10.
    expect(inBytes(s1) - inBytes(s0)).toBeCloseTo(kbps * 125 * 10, -3);
    expect(pushBytes(s1)).toBeGreaterThan(pushBytes(s0));
    expect(s1.stats.bytes_out).toBeGreaterThanOrEqual(s0.stats.bytes_out);
    for (const s of sim.world.sessions.list()) {
      expect(s.bytes as number).toBeGreaterThan(sessions0.get(s.id as string)!);
      expect(s.updated_at).toBe(sim.now());
    }
  });
});

describe('churn', () => {
  it('opens and closes sessions while keeping their number near the target', async () => {
    const sim = await start({ streams: 40, sessions: 2000, seed: 3 });
    const before = new Set(sim.world.sessions.list().map((s) => s.id));
    for (let i = 0; i < 12; i++) sim.advance(5 * 60_000);
    const after = sim.world.sessions.list();
    const kept = after.filter((s) => before.has(s.id)).length;
    expect(kept).toBeLessThan(before.size * 0.2);
    expect(after.length - kept).toBeGreaterThan(1000);
    expect(after.length).toBeGreaterThan(1600);
    expect(after.length).toBeLessThan(2400);
    // The served collection is always in id order.
    const ids = (await walk(`${sim.url}/streamer/api/v3/sessions`, 'sessions', { limit: '1000', select: 'id' })).items.map((s) => s.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toHaveLength(after.length);
  });

  it('takes streams down and brings them back over a day', async () => {
    const sim = await start({ streams: 200, sessions: 0, seed: 4 });
    let sawDown = 0;
    const downEver = new Set<string>();
    for (let i = 0; i < 96; i++) {
      sim.advance(15 * 60_000);
      for (const s of sim.world.streams.list() as any[]) {
        if (!s.stats.alive) {
          sawDown++;
          downEver.add(s.name);
          expect(s.stats.status).toBe('error');
          expect(s.stats.bitrate).toBe(0);
        }
      }
    }
    expect(downEver.size).toBeGreaterThan(5);
    expect(sawDown).toBeGreaterThan(0);
    const stillDown = (sim.world.streams.list() as any[]).filter((s) => !s.stats.alive).length;
    expect(stillDown).toBeLessThan(downEver.size);
  });

  it('with churn off, nothing opens, closes or fails, but counters still grow', async () => {
    const sim = await start({ streams: 50, sessions: 500, churn: false, seed: 5 });
    const ids = sim.world.sessions.list().map((s) => s.id);
    const bytes = (sim.world.streams.list() as any[]).map((s) => s.stats.bytes_in);
    sim.advance(24 * 3600_000);
    expect(sim.world.sessions.list().map((s) => s.id)).toEqual(ids);
    expect((sim.world.streams.list() as any[]).every((s) => s.stats.alive)).toBe(true);
    (sim.world.streams.list() as any[]).forEach((s, i) => expect(s.stats.bytes_in).toBeGreaterThan(bytes[i]));
  });

  it('is deterministic: the same seed and steps give the same world', async () => {
    const run = async () => {
      const sim = await start({ streams: 60, sessions: 600, seed: 99, catenaKeys: [{ key: 'k', portal: 'p' }] });
      for (let i = 0; i < 10; i++) sim.advance(7 * 60_000);
      return { streams: sim.world.streams.list(), sessions: sim.world.sessions.list(), stats: sim.world.server.stats(), ops: sim.world.catena.list('p') };
    };
    expect(await run()).toEqual(await run());
  });
});

describe('scripted situations', () => {
  it('a stream set down stays down with growing delay and retries, then comes back', async () => {
    const sim = await start({ streams: 10, sessions: 0, seed: 6 });
    const name = sim.world.streams.names()[0]!;
    sim.world.streams.setAlive(name, false);
    expect(stream(sim, name).stats).toMatchObject({ alive: false, status: 'error', bitrate: 0 });
    sim.advance(60_000);
    const down = stream(sim, name).stats;
    expect(down.alive).toBe(false);
    expect(down.ts_delay).toBeGreaterThanOrEqual(60_000);
    expect(down.retry_count).toBeGreaterThanOrEqual(12);
    sim.world.streams.setAlive(name, true);
    sim.advance(1000);
    const up = stream(sim, name).stats;
    expect(up).toMatchObject({ alive: true, status: 'running' });
    expect(up.bitrate).toBeGreaterThan(0);
    expect(up.ts_delay).toBeLessThan(1000);
    sim.world.streams.setAlive(name, false, 'waiting');
    expect(stream(sim, name).stats.status).toBe('waiting');
  });

  it('a stream with a backup file keeps flowing from it while its inputs are down', async () => {
    const sim = await start({ streams: 3, sessions: 0 });
    sim.world.streams.put('with-backup', { inputs: [{ url: 'udp://239.0.0.1:1234' }], backup: { file: 'vod/blank.mp4' } });
    sim.world.streams.setAlive('with-backup', false);
    expect(stream(sim, 'with-backup').stats.backup_running).toBe(true);
    sim.world.streams.setAlive('with-backup', true);
    expect(stream(sim, 'with-backup').stats.backup_running).toBe(false);
  });

  it.each(['flat', 'nested'] as const)('fails over to the backup input and back (%s)', async (shape) => {
    const sim = await start({ shape, streams: 2, sessions: 0, churn: false });
    sim.world.streams.put('fo', { inputs: [{ url: 'udp://239.0.0.1:1234' }, { url: 'hls://backup.example/fo.m3u8' }] });
    const active = () => {
      const s = stream(sim, 'fo');
      return shape === 'flat' ? s.inputs.findIndex((i: any) => i.stats.active) : s.stats.inputs.findIndex((i: any) => i.active);
    };
    expect(active()).toBe(0);
    sim.advance(5000);
    sim.world.streams.setFailover('fo', true);
    sim.advance(5000);
    expect(active()).toBe(1);
    // 2025: stats.input is the stream's input_stats over all its inputs (go-flussonic InputStats:
    // bytes "received by this stream ... will sum all inputs"); stats.inputs[i] each input's own.
    const sumOfInputs = (field: string) => stream(sim, 'fo').stats.inputs.reduce((sum: number, i: any) => sum + i[field], 0);
    if (shape === 'nested') {
      expect(stream(sim, 'fo').stats.input.url).toBe('hls://backup.example/fo.m3u8');
      expect(stream(sim, 'fo').stats.input.input_switches).toBe(1);
      expect(stream(sim, 'fo').stats.inputs.map((i: any) => i.input_switches)).toEqual([0, 1]);
      expect(stream(sim, 'fo').stats.input.num_sec_on_secondary_input).toBe(5);
      expect(stream(sim, 'fo').stats.input.bytes).toBe(sumOfInputs('bytes'));
      expect(stream(sim, 'fo').stats.input.bytes).toBeGreaterThan(stream(sim, 'fo').stats.inputs[1].bytes);
    } else {
      expect(stream(sim, 'fo').stats.url).toBe('hls://backup.example/fo.m3u8');
    }
    sim.world.streams.addInputErrors('fo', '404', 2);
    expect(() => sim.world.streams.addInputErrors('fo', 'lost_packets')).toThrow(/errors_lost_packets/);
    sim.world.streams.setFailover('fo', false);
    expect(active()).toBe(0);
    sim.world.streams.addInputErrors('fo', 'lost_packets');
    sim.advance(5000);
    if (shape === 'nested') {
      const s = stream(sim, 'fo');
      expect(s.stats.input.input_switches).toBe(2);
      expect(s.stats.inputs.map((i: any) => i.input_switches)).toEqual([1, 1]);
      expect(s.stats.input.bytes).toBe(sumOfInputs('bytes'));
      // Error counters of both inputs' kinds, each the sum of the inputs'.
      expect([s.stats.input.errors_404, s.stats.input.errors_lost_packets]).toEqual([2, 1]);
      expect([s.stats.inputs[1].errors_404, s.stats.inputs[0].errors_lost_packets, s.stats.inputs[0].errors_404]).toEqual([2, 1, undefined]);
      expect(s.stats.input.frames).toBe(sumOfInputs('frames'));
    }
    expect(() => sim.world.streams.setFailover(sim.world.streams.names().find((n) => n !== 'fo' && stream(sim, n).inputs.length === 1)!, true)).toThrow(/two inputs/);
  });

  it('fails over by itself when churn breaks a primary input', async () => {
    const sim = await start({ shape: 'nested', streams: 300, sessions: 0, seed: 8 });
    for (let i = 0; i < 48; i++) sim.advance(30 * 60_000);
    const switched = (sim.world.streams.list() as any[]).filter((s) => s.stats.input?.input_switches > 0);
    expect(switched.length).toBeGreaterThan(0);
  });

  it('opens and closes sessions on request; clients follow', async () => {
    const sim = await start({ shape: 'nested', streams: 5, sessions: 0, churn: false });
    const name = sim.world.streams.names()[0]!;
    const a = sim.world.sessions.open({ name, proto: 'dash', country: 'nl', bytesPerSecond: 1000 });
    sim.world.sessions.open({ name, proto: 'hls' });
    expect(stream(sim, name).stats.online_clients).toBe(2);
    expect(stream(sim, name).stats.play.play_opened_sessions_by_proto).toEqual({ dash: 1, hls: 1 });
    sim.advance(10_000);
    expect(sim.world.sessions.get(a.id as string)!.bytes).toBe(10_000);
    expect(sim.world.sessions.close(a.id as string)).toBe(true);
    expect(sim.world.sessions.close(a.id as string)).toBe(false);
    expect(stream(sim, name).stats.online_clients).toBe(1);
    expect((await getJson(`${sim.url}/streamer/api/v3/sessions`)).body.sessions).toHaveLength(1);
  });

  it('keeps a closed session listed with closed_at while sessionLingerMs lasts', async () => {
    const sim = await start({ streams: 3, sessions: 0, churn: false, sessionLingerMs: 30_000 });
    const s = sim.world.sessions.open({ name: sim.world.streams.names()[0]! });
    sim.advance(5000);
    sim.world.sessions.close(s.id as string);
    const listed = (await getJson(`${sim.url}/streamer/api/v3/sessions`)).body.sessions;
    expect(listed).toHaveLength(1);
    expect(listed[0].closed_at).toBe(sim.now());
    expect(sim.world.sessions.list()).toHaveLength(0);
    sim.advance(30_000);
    expect((await getJson(`${sim.url}/streamer/api/v3/sessions`)).body.sessions).toHaveLength(0);
  });

  it('the query cache never serves a stale page after the world changed', async () => {
    const sim = await start({ streams: 5, sessions: 50, churn: false });
    const url = `${sim.url}/streamer/api/v3/sessions?proto=rtmp&sort=-bytes&limit=1000&select=id`;
    const before = (await getJson(url)).body.sessions.length;
    sim.world.sessions.open({ name: sim.world.streams.names()[0]!, proto: 'rtmp' });
    expect((await getJson(url)).body.sessions.length).toBe(before + 1);
  });
});

describe('server and GPUs', () => {
  it('GPU load follows the transcoders on the device, temperature follows load', async () => {
    const sim = await start({ streams: 200, sessions: 0, gpus: 2, churn: false, seed: 10 });
    sim.advance(10 * 60_000);
    const devices = (sim.world.server.stats() as any).transcoder_devices;
    const loaded = (sim.world.streams.list() as any[]).filter((s) => s.transcoder?.global?.deviceid !== undefined);
    expect(loaded.length).toBeGreaterThan(5);
    for (const d of devices) {
      const n = loaded.filter((s) => s.transcoder.global.deviceid === d.id).length;
      // 10 minutes at a 30 s time constant: the load sits on its target, 100 * (1 - e^(-0.1 n)).
      expect(Math.abs(d.gpu_enc - 100 * (1 - Math.exp(-0.1 * n)))).toBeLessThanOrEqual(1);
      expect(d.gpu_temp).toBeGreaterThan(35);
    }
    const hot = devices.reduce((a: any, b: any) => (a.gpu_enc > b.gpu_enc ? a : b));
    const cool = devices.reduce((a: any, b: any) => (a.gpu_enc > b.gpu_enc ? b : a));
    if (hot.gpu_enc > cool.gpu_enc + 10) expect(hot.gpu_temp).toBeGreaterThan(cool.gpu_temp);
  });

  it('GPU readings wander with churn and can be pinned by a test', async () => {
    const sim = await start({ streams: 100, sessions: 0, gpus: 1, seed: 12 });
    const temps = new Set<number>();
    for (let i = 0; i < 20; i++) {
      sim.advance(60_000);
      temps.add((sim.world.server.stats() as any).transcoder_devices[0].gpu_sm);
    }
    expect(temps.size).toBeGreaterThan(3);
    sim.world.server.setDevice(0, { gpu_temp: 91, memUsed: 15000 });
    const d = (sim.world.server.stats() as any).transcoder_devices[0];
    expect(d).toMatchObject({ gpu_temp: 91, memUsed: 15000, memFree: d.memTotal - 15000 });
    sim.world.server.setDevice(0, null);
    expect((sim.world.server.stats() as any).transcoder_devices[0].gpu_temp).not.toBe(91);
    sim.world.server.set({ streamer_status: 'starting' });
    expect((await getJson(`${sim.url}/streamer/api/v3/config/stats`)).body.streamer_status).toBe('starting');
  });

  it('server totals follow the world', async () => {
    const sim = await start({ streams: 30, sessions: 300, seed: 13 });
    sim.advance(60_000);
    const name = sim.world.streams.names()[0]!;
    sim.world.streams.setAlive(name, false);
    sim.advance(1000);
    const st = sim.world.server.stats() as any;
    expect(st.total_clients).toBe(sim.world.sessions.size);
    expect(st.online_streams).toBe((sim.world.streams.list() as any[]).filter((s) => s.stats.alive).length);
    expect(st.online_streams).toBeLessThan(30);
    expect(st.input_kbit).toBe((sim.world.streams.list() as any[]).reduce((n, s) => n + s.stats.input_bitrate, 0));
    expect(st.uptime).toBe(Math.floor((sim.now() - st.started_at * 1000) / 1000));
  });

  it('DVR storage fills and counts errors; tests can add errors', async () => {
    const sim = await start({ shape: 'nested', streams: 60, sessions: 0, dvrs: 1, seed: 14 });
    const used0 = (sim.world.dvrs.list()[0] as any).stats.used;
    sim.advance(3600_000);
    const dvr = sim.world.dvrs.list()[0] as any;
    expect(dvr.stats.used).not.toBe(used0);
    sim.world.dvrs.addError('dvr0', 'enospc', 3);
    expect((sim.world.dvrs.list()[0] as any).stats.errors.enospc).toBe(dvr.stats.errors.enospc + 3);
    const flat = await start({ shape: 'flat', streams: 1, sessions: 0, dvrs: 1, dvrStats: true });
    expect((flat.world.dvrs.list()[0] as any).stats.size).toBeGreaterThan(0);
  });
});
