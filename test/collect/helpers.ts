/** Shared pieces of the collector mapping tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { expect } from 'vitest';
import { mapStream } from '../../src/collect/streams-map.js';
import { collectStreams } from '../../src/collect/streams.js';
import type { ServerConfig, StreamFamilySwitches, StreamFilter } from '../../src/config/types.js';
import { STREAM_FAMILY_GROUPS } from '../../src/config/switches.js';
import type { JsonObject } from '../../src/flussonic/api.js';
import { FlussonicClient } from '../../src/flussonic/client.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { SeriesWriter } from '../../src/render/series.js';
import { findBinary, promtool } from '../helpers/promtool.js';
import { NO_STATS, serverConfig } from '../helpers/runtime.js';
import { REPO_ROOT } from '../helpers/shared.js';

export const SERVER = 'edge-1';
/** Every optional family group on: the mapping tests cover every family. */
export const ALL_FAMILIES: StreamFamilySwitches = Object.fromEntries(STREAM_FAMILY_GROUPS.map((g) => [g, true])) as StreamFamilySwitches;
export const NO_FILTER: StreamFilter = {};

export function newWriter(): SeriesWriter {
  return new SeriesWriter([['server', SERVER]]);
}

/** What the stream mapper reads of a server's config. */
export type StreamConfig = Pick<ServerConfig, 'streams' | 'families'>;
/** Every stream, every family group on. */
export const ALL_ON: StreamConfig = { streams: NO_FILTER, families: ALL_FAMILIES };

/** The streams mapped into one writer, as the collector maps a page. */
export function mapStreams(items: readonly JsonObject[], config: StreamConfig = ALL_ON): SeriesWriter {
  const out = newWriter();
  for (const item of items) mapStream(out, item, config);
  return out;
}

/**
 * One poll of the streams collector, every family group on, through the real client from the
 * server at `url` (the simulator): its exposition, after checking the mapping had no problem.
 */
export async function pollStreams(url: string): Promise<string> {
  const config = serverConfig(SERVER, url, { families: ALL_FAMILIES });
  const client = new FlussonicClient({ config, stats: NO_STATS, retryBackoffMs: 1 });
  const out = newWriter();
  try {
    await collectStreams({ client, config, signal: AbortSignal.timeout(15_000), log: pino({ level: 'silent' }), out });
  } finally {
    await client.close();
  }
  expect(out.problems).toEqual([]);
  return exposition(out);
}

/** The exposition as served for one target's writer: catalogue order, with HELP and TYPE. */
export function exposition(out: SeriesWriter): string {
  const cache = new ExpositionCache();
  cache.swap(SERVER, out.render());
  return cache.current.text;
}

/** The exposition without HELP lines, as the golden files hold it (TYPE lines stay). */
export function withoutHelp(text: string): string {
  return text
    .split('\n')
    .filter((line) => !line.startsWith('# HELP '))
    .join('\n');
}

export function readFixture(relative: string): unknown {
  return JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures', relative), 'utf8'));
}

export function readGolden(name: string): string {
  return readFileSync(join(REPO_ROOT, 'test/fixtures/golden', name), 'utf8');
}

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Sample lines (no comments) of an exposition. */
export function sampleLines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * What the server returns for `select=`: the Flussonic way (openapi_handler's selector), where a
 * dotted path keeps only that branch and a leaf keeps the whole value. Flussonic fails where a
 * path descends into a value that is not an object (null, an array); so does this, so a test
 * fails if a collector's select list would do that on real data.
 */
export function applySelect(item: JsonObject, select: readonly string[]): JsonObject {
  type Tree = { [key: string]: Tree | true };
  const tree: Tree = {};
  for (const path of select) {
    const parts = path.split('.');
    let node = tree;
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1) node[part] = true;
      else {
        const next = node[part];
        if (next === true) break;
        node = node[part] = next ?? {};
      }
    }
  }
  const project = (value: unknown, t: Tree, where: string): JsonObject => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new Error(`select descends into ${where}, which is ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
    }
    const source = value as Record<string, unknown>;
    const result: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(t)) {
      if (!(key in source)) continue;
      result[key] = sub === true ? source[key] : project(source[key], sub, `${where}.${key}`);
    }
    return result;
  };
  return project(item, tree, 'item');
}

/** Asserts that promtool finds nothing in the exposition (skips, with the reason printed, without promtool). */
export function expectPromtoolClean(text: string): void {
  const bin = findBinary('promtool');
  if (!bin) return;
  const r = promtool(bin, ['check', 'metrics'], text);
  expect({ status: r.status, findings: `${r.stdout}${r.stderr}`.trim() }).toEqual({ status: 0, findings: '' });
}

/**
 * Every string under the given keys anywhere in a JSON value, at any depth below the key (so a
 * `headers` map or a `urls` list counts whole): URLs, IPs, tokens, uuids, licence text.
 */
export function stringsUnderKeys(value: unknown, keys: ReadonlySet<string>): string[] {
  const found = new Set<string>();
  const walk = (v: unknown, inside: boolean): void => {
    if (typeof v === 'string') {
      if (inside) found.add(v);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, inside);
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) walk(x, inside || keys.has(k));
    }
  };
  walk(value, false);
  return [...found];
}
