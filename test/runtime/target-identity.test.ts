/**
 * When a reloaded target is the same one (src/threads/target-descriptions.ts identityOf): the pool
 * keeps a target whose poll_interval or timeout alone changed, and replaces it on any other
 * change. The configs are loaded as the command loads them, so a default timeout that follows the
 * interval is part of the check.
 */
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { identityOf, targetDescriptions } from '../../src/threads/target-descriptions.js';
import { ConfigDir } from '../config/config-files.js';

const dir = new ConfigDir();
afterAll(() => dir.cleanup());

const identities = (yaml: string) => targetDescriptions(loadConfig(dir.write('c.yaml', yaml), {})).map(identityOf);

const server = (settings: string) => `servers:\n  - name: edge-1\n    url: http://127.0.0.1:9\n${settings}`;
const catena = (settings: string) => `catena:\n  - name: billing\n    url: http://127.0.0.1:9\n    api_key: k\n${settings}`;

it.each([
  ['a server', server('    poll_interval: 1s\n'), server('    poll_interval: 30s\n')],
  ['a server, with an explicit timeout', server('    poll_interval: 15s\n    timeout: 5s\n'), server('    poll_interval: 15s\n    timeout: 8s\n')],
  ['a Catena service', catena('    poll_interval: 1s\n'), catena('    poll_interval: 2m\n')],
])('keeps %s whose timing alone changed', (_what, before, after) => {
  expect(identities(after)).toEqual(identities(before));
});

it.each([
  ['url', server('    poll_interval: 1s\n'), server('    poll_interval: 1s\n').replace('127.0.0.1:9', '127.0.0.1:10')],
  ['page_size', server('    poll_interval: 1s\n'), server('    poll_interval: 1s\n    page_size: 50\n')],
  ['password', server('    username: u\n    password: a\n'), server('    username: u\n    password: b\n')],
  ['api_key', catena(''), catena('').replace('api_key: k', 'api_key: other')],
])('replaces a target whose %s changed', (_what, before, after) => {
  expect(identities(after)).not.toEqual(identities(before));
});
