/** The logger censors credential-like keys wherever a log call carries them. */
import { Writable } from 'node:stream';
import { expect, test } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { logfmtLine } from '../../src/lib/logfmt.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

test('credentials under known keys are redacted at any of the usual depths', () => {
  const out = capture();
  const log = createLogger('info', out.stream);
  log.info({ password: 'S1', server: { credentials: { kind: 'basic', username: 'u', password: 'S2' } }, config: { catena: { apiKey: 'S3' } } }, 'one');
  log.info({ req: { headers: { authorization: 'Basic S4', 'x-auth-token': 'S5', accept: 'json' } } }, 'two');
  const text = JSON.stringify(out.lines());
  for (const secret of ['S1', 'S2', 'S3', 'S4', 'S5']) expect(text).not.toContain(secret);
  expect(text).toContain('[redacted]');
  expect(out.lines()[1]).toMatchObject({ req: { headers: { accept: 'json' } } });
});

test('the level filters lower levels', () => {
  const out = capture();
  const log = createLogger('warn', out.stream);
  log.info('hidden');
  log.warn('shown');
  expect(out.lines().map((l) => l.msg)).toEqual(['shown']);
});

test('logfmt: time, text level and message first, nested keys dotted, values quoted and escaped where needed', () => {
  const line = JSON.stringify({ level: 50, time: '2026-01-01T00:00:00.000Z', pid: 7, address: { port: 9228, host: '' }, list: [1, 'a'], err: { message: 'a "b"\nstack' }, ok: true, msg: 'worker thread crashed: x=1' });
  expect(logfmtLine(`${line}\n`)).toBe(
    'ts=2026-01-01T00:00:00.000Z level=error msg="worker thread crashed: x=1" pid=7 address.port=9228 address.host="" list="[1,\\"a\\"]" err.message="a \\"b\\"\\nstack" ok=true\n',
  );
});
