/** `flussonic-exporter simulate`: flags, what it prints, a clean stop, exit codes. */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runSimulate } from '@flussonic-exporter/simulator/cli';
import { basic, getJson } from './http-client.js';

function capture() {
  let text = '';
  return { write: (s: string) => (text += s), get text() { return text; } };
}

describe('runSimulate', () => {
  it.each([
    [['--shape', 'round'], /--shape/],
    [['--streams', 'many'], /--streams/],
    [['--port', '70000'], /--port/],
    [['--frobnicate'], /frobnicate/],
    [['--catena-key', 'no-portal'], /--catena-key/],
    [['--view-auth', 'nopassword'], /--view-auth/],
    [['--fault', '/nowhere:hang'], /unknown endpoint/],
    [['--fault', '/sessions:explode'], /unknown fault/],
    [['--fault', '/sessions:latencyMs=soon'], /latencyMs/],
    [['positional'], /positional|Unexpected argument/],
  ])('rejects %j with code 2 and a message on stderr', async (argv, message) => {
    const out = capture();
    const err = capture();
    expect(await runSimulate(argv as string[], { stdout: out, stderr: err })).toBe(2);
    expect(err.text).toMatch(message);
    expect(out.text).toBe('');
  });

  it('prints its flags with --help', async () => {
    const out = capture();
    expect(await runSimulate(['--help'], { stdout: out })).toBe(0);
    for (const flag of ['--port', '--streams', '--sessions', '--gpus', '--shape', '--seed', '--view-auth', '--edit-auth', '--catena-key', '--fault']) expect(out.text).toContain(flag);
  });

  it('serves what the flags say, prints its URLs without secrets, and stops cleanly', async () => {
    const out = capture();
    const stop = new AbortController();
    const running = runSimulate(
      ['--port', '0', '--streams', '7', '--sessions', '30', '--gpus', '3', '--shape', 'nested', '--seed', '5', '--view-auth', 'watch:w-pass', '--edit-auth', 'boss:b-pass', '--catena-key', 'sekret-key:tenant1', '--fault', '/dvrs:status=503'],
      { stdout: out, stderr: out, stop: stop.signal },
    );
    await expect.poll(() => out.text, { interval: 10, timeout: 10_000 }).toContain('Stop with Ctrl-C');
    const api = /media server API: (http:\/\/127\.0\.0\.1:\d+\/streamer\/api\/v3)/.exec(out.text)![1]!;
    const ops = /operations log: (\S+)/.exec(out.text)![1]!;
    expect(out.text).not.toMatch(/w-pass|b-pass|sekret-key/);
    expect(out.text).toContain('/flussonic/api/v3');

    const auth = { authorization: basic('watch', 'w-pass') };
    expect((await getJson(`${api}/streams`)).status).toBe(401);
    const streams = await getJson(`${api}/streams`, { headers: auth });
    expect(streams.body.streams).toHaveLength(7);
    expect(streams.body.streams[0].stats.online_clients).toBeTypeOf('number');
    expect((await getJson(`${api}/config/stats`, { headers: auth })).body.transcoder_devices).toHaveLength(3);
    expect((await getJson(`${api}/dvrs`, { headers: auth })).status).toBe(503);
    const log = await getJson(ops, { headers: { 'x-auth-token': 'sekret-key' } });
    expect(log.status).toBe(200);
    expect(log.body.operations.length).toBeGreaterThan(0);

    stop.abort();
    expect(await running).toBe(0);
    await expect(fetch(`${api}/streams`)).rejects.toThrow();
  });

  it('exits 1 with a reason when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const err = capture();
      expect(await runSimulate(['--port', String(port)], { stderr: err, stdout: capture() })).toBe(1);
      expect(err.text).toContain('already in use');
    } finally {
      blocker.close();
    }
  });
});
