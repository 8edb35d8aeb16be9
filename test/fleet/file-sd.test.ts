/** file_sd discovery: target files parsed as Prometheus reads them, re-read when they change. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { FileSdSource } from '../../src/config/types.js';
import { parseTargetFile } from '../../src/fleet/file-sd.js';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { samples, value } from '../helpers/exposition.js';
import { fleetConfig, startExporter, stopExporters, template } from './helpers.js';

let sims: RunningSimulator[];
let dir: string;
beforeAll(async () => {
  sims = await Promise.all([1, 2, 3].map((seed) => startSimulator({ streams: 2, sessions: 3, clock: 'manual', churn: false, seed })));
  dir = mkdtempSync(join(tmpdir(), 'fleet-file-sd-'));
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});
afterEach(stopExporters);

const hostPort = (sim: RunningSimulator) => new URL(sim.url).host;

function source(files: string[], refreshIntervalMs = 60_000): FileSdSource {
  return { kind: 'file_sd', name: 'inventory', files, template: 'edge', refreshIntervalMs };
}

/** Awaits a condition the exporter reaches on its own (its watch or its interval), bounded. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('file_sd', () => {
  test('JSON and YAML files (glob in the file name), labels, and a re-read on change', async () => {
    writeFileSync(join(dir, 'a.json'), JSON.stringify([{ targets: [hostPort(sims[0]!)], labels: { dc: 'ams', server: 'edge-a' } }]));
    writeFileSync(join(dir, 'b.yml'), `- targets: ["${hostPort(sims[1]!)}"]\n  labels: {dc: fra}\n`);
    const h = startExporter(fleetConfig([], { edge: template() }, [source([join(dir, '*.json'), join(dir, 'b.yml')], 1000)]));
    h.exporter.start();
    await until('both files read', async () => samples((await h.get('/metrics')).body, 'flussonic_up').length === 2);
    const sd = JSON.parse((await h.get('/sd')).body) as { targets: string[]; labels: Record<string, string> }[];
    const byTarget = (a: Record<string, string>, b: Record<string, string>) => a.__param_target!.localeCompare(b.__param_target!);
    expect(sd.map((g) => g.labels).sort(byTarget)).toEqual(
      [
        // instance and server: the server's name, so Prometheus keeps one `up` per server.
        { dc: 'ams', __metrics_path__: '/probe', __param_target: 'edge-a', instance: 'edge-a', server: 'edge-a' },
        { dc: 'fra', __metrics_path__: '/probe', __param_target: hostPort(sims[1]!), instance: hostPort(sims[1]!), server: hostPort(sims[1]!) },
      ].sort(byTarget),
    );

    // A new target in a file: polled after the change is seen, without a restart or a SIGHUP.
    writeFileSync(join(dir, 'a.json'), JSON.stringify([{ targets: [hostPort(sims[0]!)], labels: { server: 'edge-a' } }, { targets: [hostPort(sims[2]!)] }]));
    await until('the changed file read', async () => value((await h.get('/metrics')).body, 'flussonic_up', { server: hostPort(sims[2]!) }) !== undefined);

    // A broken file: the refresh fails with the file and place, the last good list stays.
    writeFileSync(join(dir, 'a.json'), JSON.stringify([{ targets: ['http://x.example/path'] }]));
    await until('the failure counted', async () => (value((await h.get('/metrics')).body, 'flussonic_exporter_discovery_failures_total', { source: 'inventory' }) ?? 0) > 0);
    expect(samples((await h.get('/metrics')).body, 'flussonic_up')).toHaveLength(3);
    expect(h.log.text()).toContain(`${join(dir, 'a.json')}: [0].targets[0]: expected host:port`);

    // The file gone from the glob: its servers are stopped and withdrawn.
    rmSync(join(dir, 'a.json'));
    await until('the servers of the removed file withdrawn', async () => samples((await h.get('/metrics')).body, 'flussonic_up').length === 1);
  });

  test('bad target files are refused with the place of the problem', () => {
    const bad: [string, string, RegExp][] = [
      ['t.json', '{"targets": []}', /t\.json: expected a list of \{targets, labels\} groups/],
      ['t.json', '[{"targets": "a:1"}]', /t\.json: \[0\]\.targets: expected a list of host:port/],
      ['t.json', '[{"targets": ["a:1"], "labels": {"1x": "y"}}]', /\[0\]\.labels: "1x" is not a label name/],
      ['t.json', '[{"targets": ["a:1", "b:2"], "labels": {"server": "s"}}]', /\[0\]\.labels\.server: names a server, so the group must have exactly one target/],
      ['t.json', '[{"targets": ["user:pw@a:1"]}]', /\[0\]\.targets\[0\]: expected host:port/],
      ['t.json', '[{"targets": ["a:1"], "extra": 1}]', /\[0\]: unknown key "extra"/],
      ['t.yaml', 'targets: [', /t\.yaml: not valid YAML/],
      ['t.json', '[{"targets": ["a:1"], "labels": {"__scheme__": "ftp"}}]', /__scheme__: expected http or https/],
    ];
    for (const [file, text, message] of bad) expect(() => parseTargetFile(text, file, 'inv'), text).toThrow(message);
    // A parse error never quotes the file's text (it may hold anything).
    expect(() => parseTargetFile('[{"targets": ["a:1"], "labels": {"k": "SECRETISH"}', 't.json', 'inv')).toThrow(/^file_sd inv: t\.json: not valid JSON/);
    for (const [name, text] of [['t.json', '[{"x": SECRETISH}]'], ['t.yaml', '- targets: [SECRETISH\n  labels: {']]) {
      expect(() => parseTargetFile(text!, name!, 'inv')).toThrow(/not valid/);
      try {
        parseTargetFile(text!, name!, 'inv');
      } catch (error) {
        expect((error as Error).message).not.toContain('SECRETISH');
      }
    }
    expect(parseTargetFile('[{"targets": ["a:1"], "labels": {"__scheme__": "https"}}]', 't.json', 'inv')[0]!.server.url).toBe('https://a:1');
  });
});
