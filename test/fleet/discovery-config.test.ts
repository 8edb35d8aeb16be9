/** `templates:` and `discovery:` in the config file: what a good one gives, and every bad one refused with path and line. */
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigDir, configErrorOf } from '../config/config-files.js';

const dir = new ConfigDir();
afterAll(() => dir.cleanup());

const GOOD = `templates:
  edge:
    username: monitor
    password_file: secret.txt
    collectors: { dvrs: true, cluster: true }
discovery:
  refresh_interval: 20s
  cluster_peers:
    - seeds: [http://origin-1:80/, https://origin-2]
      template: edge
  file_sd:
    - name: inventory
      files: [targets/*.json, more.yml]
      template: edge
      refresh_interval: 5s
catena:
  - name: billing
    url: http://c
    api_key: k
    shard: 2
`;

describe('discovery config', () => {
  test('a good one: templates resolved with their secrets, sources with defaults and absolute paths', () => {
    dir.write('secret.txt', 'template-Pa55\n');
    const config = loadConfig(dir.write('good.yaml', GOOD), {});
    expect(config.servers).toEqual([]);
    const edge = config.templates!.get('edge')!;
    expect(edge.credentials).toEqual({ kind: 'basic', username: 'monitor', password: 'template-Pa55' });
    expect(edge.collectors).toMatchObject({ dvrs: true, cluster: true, streams: true });
    expect(config.discovery).toEqual([
      { kind: 'cluster_peers', name: 'cluster_peers-0', template: 'edge', refreshIntervalMs: 20_000, seeds: ['http://origin-1', 'https://origin-2'] },
      { kind: 'file_sd', name: 'inventory', template: 'edge', refreshIntervalMs: 5000, files: [`${dir.path}/targets/*.json`, `${dir.path}/more.yml`] },
    ]);
    expect(config.catena[0]!.shard).toBe(2);
  });

  const BAD: [string, string, string, RegExp][] = [
    ['unknown template', 'discovery:\n  cluster_peers:\n    - seeds: [http://a]\n      template: edge\n', 'discovery.cluster_peers[0].template', /no template "edge" under templates: \(add one/],
    ['template with a name', 'templates:\n  edge:\n    name: x\n    url: http://a\ndiscovery:\n  file_sd:\n    - files: [a.json]\n      template: edge\n', 'templates.edge.name', /unknown key/],
    ['seed with credentials', 'templates:\n  e: {}\ndiscovery:\n  cluster_peers:\n    - seeds: [http://u:SEEDPW@a]\n      template: e\n', 'discovery.cluster_peers[0].seeds[0]', /must not contain credentials; the template has them/],
    ['no seeds', 'templates:\n  e: {}\ndiscovery:\n  cluster_peers:\n    - template: e\n', 'discovery.cluster_peers[0].seeds', /required: a list of one or more seed server URLs/],
    ['file of another kind', 'templates:\n  e: {}\ndiscovery:\n  file_sd:\n    - files: [targets.txt]\n      template: e\n', 'discovery.file_sd[0].files[0]', /must end in \.json, \.yml or \.yaml/],
    ['glob in a directory', 'templates:\n  e: {}\ndiscovery:\n  file_sd:\n    - files: [/etc/*/t.json]\n      template: e\n', 'discovery.file_sd[0].files[0]', /a pattern \(\*\) is allowed only in the file name/],
    ['duplicate source names', 'templates:\n  e: {}\ndiscovery:\n  file_sd:\n    - {name: a, files: [a.json], template: e}\n    - {name: a, files: [b.json], template: e}\n', 'discovery.file_sd[1].name', /duplicate discovery name "a"/],
    ['misspelt discovery key', 'templates:\n  e: {}\ndiscovery:\n  file_sd:\n    - {files: [a.json], template: e, refresh_intervall: 5s}\n', 'discovery.file_sd[0].refresh_intervall', /did you mean refresh_interval/],
    ['refresh below a second', 'templates:\n  e: {}\ndiscovery:\n  refresh_interval: 10ms\n  file_sd:\n    - {files: [a.json], template: e}\n', 'discovery.refresh_interval', /must be at least 1000ms/],
    ['catena shard not an integer', 'catena:\n  - {name: b, url: http://c, api_key: k, shard: one}\n', 'catena[0].shard', /expected an integer/],
  ];
  test.each(BAD)('%s', (_what, yaml, path, message) => {
    const error = configErrorOf(() => loadConfig(dir.write('bad.yaml', yaml), {}));
    const problem = error.problems.find((p) => p.path === path);
    expect(problem, JSON.stringify(error.problems)).toBeDefined();
    expect(problem!.message).toMatch(message);
    expect(problem!.line).toBeGreaterThan(0);
    expect(JSON.stringify(error.problems)).not.toContain('SEEDPW');
  });
});
