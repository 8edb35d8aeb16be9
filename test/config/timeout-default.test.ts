/**
 * A short `poll_interval` (e.g. 1s) without `timeout` is a valid config. Like Prometheus, an
 * unset timeout follows the interval: it is min(10s, the poll deadline); only an explicit
 * timeout that is too long is refused.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { pollDeadlineMs } from '../../src/poll/schedule.js';
import { ConfigDir, configErrorOf } from './config-files.js';

const dir = new ConfigDir();
afterAll(() => dir.cleanup());

describe('default timeout', () => {
  test('poll_interval: 1s without timeout is accepted, with a timeout inside the poll deadline', () => {
    const config = loadConfig(dir.write('c.yaml', 'poll_interval: 1s\nservers:\n  - name: a\n    url: http://h\n'), {});
    const [server] = config.servers;
    expect(server!.pollIntervalMs).toBe(1000);
    expect(server!.timeoutMs).toBeLessThanOrEqual(pollDeadlineMs(1000));
    expect(server!.timeoutMs).toBeGreaterThan(0);
  });

  test.each([
    [1_000, 500],
    [2_000, 1_000],
    [10_000, 9_000],
    [15_000, 10_000],
    [60_000, 10_000],
  ])('poll_interval %i ms -> timeout %i ms (servers and catena alike)', (intervalMs, timeoutMs) => {
    const yaml = `servers:\n  - name: a\n    url: http://h\n    poll_interval: ${intervalMs}ms\ncatena:\n  - name: c\n    url: http://c\n    api_key: k\n    poll_interval: ${intervalMs}ms\n`;
    const config = loadConfig(dir.write('c.yaml', yaml), {});
    expect(config.servers[0]!.timeoutMs).toBe(timeoutMs);
    expect(config.catena[0]!.timeoutMs).toBe(timeoutMs);
  });

  test('an explicit timeout is kept as written, and refused only when not below the interval', () => {
    const ok = loadConfig(dir.write('c.yaml', 'servers:\n  - name: a\n    url: http://h\n    poll_interval: 1s\n    timeout: 900ms\n'), {});
    expect(ok.servers[0]!.timeoutMs).toBe(900);
    const error = configErrorOf(() => loadConfig(dir.write('c.yaml', 'servers:\n  - name: a\n    url: http://h\n    poll_interval: 1s\n    timeout: 1s\n'), {}));
    expect(error.problems).toEqual([expect.objectContaining({ path: 'servers[0].timeout', line: 5, message: expect.stringMatching(/^1s must be below the poll interval \(1s\)/) })]);
  });
});
