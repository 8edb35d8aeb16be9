/**
 * Discovery source `file_sd`: Prometheus file_sd target files, so any inventory system can feed
 * servers. A file (JSON, or YAML for .yml/.yaml) holds a list of groups:
 *
 *   [{ "targets": ["flussonic-1:80", "flussonic-2:80"], "labels": { "dc": "ams" } }]
 *
 * Each target `host:port` is one server at `http://host:port` (`https` with the label
 * `__scheme__: https`), named by the target itself, or by the label `server` in a group of one
 * target. Labels not starting with `__` (and other than `server`) go with the target into /sd.
 *
 * Re-read on change: a refresh compares each file's size and mtime with the last read and parses
 * only when one changed (src/fleet/refresher.ts also watches the directories). A broken file
 * fails the refresh with the file and the position of the problem; the last good list stays.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { MAX_ALIAS_COUNT } from '../lib/yaml-doc.js';
import { readFileCapped } from '../lib/read-capped.js';
import { namePatternMatches } from '../lib/name-pattern.js';
import { MAX_NAME_LENGTH } from '../config/bounds.js';
import type { FileSdSource } from '../config/types.js';
import { baseUrl, DiscoveryError, validName, type DiscoveredServer } from './discovery-types.js';

/** What a refresh saw of the files, to tell whether anything changed since. */
export type FilesSignature = string;

/** The files a source's paths match now (a `*` in a file name is a glob; no match is no file). */
export async function matchFiles(source: FileSdSource): Promise<string[]> {
  const out: string[] = [];
  for (const path of source.files) {
    const name = basename(path);
    if (!/[*?[]/.test(name)) {
      out.push(path);
      continue;
    }
    // The file-name glob as a whole-name pattern, matched by RE2's rules like every pattern of the config.
    const pattern = { source: name.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]') };
    let entries: string[];
    try {
      entries = await readdir(dirname(path));
    } catch {
      entries = [];
    }
    for (const entry of entries.sort()) if (namePatternMatches(pattern, entry)) out.push(join(dirname(path), entry));
  }
  return [...new Set(out)];
}

/** Size and mtime of every matched file; a missing one is a failure (it was named literally). */
export async function filesSignature(files: readonly string[], source: FileSdSource): Promise<FilesSignature> {
  const parts: string[] = [];
  for (const file of files) {
    try {
      const s = await stat(file);
      parts.push(`${file}\0${s.size}\0${s.mtimeMs}`);
    } catch (error) {
      throw new DiscoveryError(`file_sd ${source.name}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return parts.join('\n');
}

/** A file_sd file: far above an inventory of thousands of servers (about 60 bytes each). */
const MAX_FILE_SD_BYTES = 8 * 1024 * 1024;

/** Every server of the files, in file order; a name given twice is an error naming both places. */
export async function readFileSd(source: FileSdSource, files: readonly string[]): Promise<DiscoveredServer[]> {
  const byName = new Map<string, { server: DiscoveredServer; where: string }>();
  for (const file of files) {
    // Capped like the config's own files: a huge file or a FIFO fails this refresh, not the process.
    const read = readFileCapped(file, MAX_FILE_SD_BYTES);
    if (!read.ok) throw new DiscoveryError(`file_sd ${source.name}: cannot read ${file} (${read.reason})`);
    const text = read.text;
    for (const { server, where } of parseTargetFile(text, file, source.name)) {
      const earlier = byName.get(server.name);
      if (earlier) throw new DiscoveryError(`file_sd ${source.name}: ${where}: server ${JSON.stringify(server.name)} is already listed at ${earlier.where}`);
      byName.set(server.name, { server, where });
    }
  }
  return [...byName.values()].map((entry) => entry.server);
}

/** The servers of one file's text, each with where it was written (`file: [g].targets[t]`). */
export function parseTargetFile(text: string, file: string, sourceName: string): { server: DiscoveredServer; where: string }[] {
  const fail = (where: string, message: string) => new DiscoveryError(`file_sd ${sourceName}: ${file}${where}: ${message}`);
  let doc: unknown;
  try {
    doc = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text, { maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // The parsers quote the source text around the problem; only the reason before any quote is kept.
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.split(/ at line |[:,]? ?["']/)[0]!.trim();
    throw fail('', `not valid ${/\.json$/i.test(file) ? 'JSON' : 'YAML'}${reason ? ` (${reason})` : ''}`);
  }
  if (doc === null || doc === undefined) return [];
  if (!Array.isArray(doc)) throw fail('', 'expected a list of {targets, labels} groups');
  const out: { server: DiscoveredServer; where: string }[] = [];
  doc.forEach((group: unknown, g) => {
    if (typeof group !== 'object' || group === null || Array.isArray(group)) throw fail(`: [${g}]`, 'expected a mapping with targets and labels');
    const { targets, labels: rawLabels, ...rest } = group as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw fail(`: [${g}]`, `unknown key ${JSON.stringify(unknown[0])} (a group has targets and labels)`);
    if (!Array.isArray(targets)) throw fail(`: [${g}].targets`, 'expected a list of host:port');
    const labels: Record<string, string> = {};
    if (rawLabels !== undefined && rawLabels !== null) {
      if (typeof rawLabels !== 'object' || Array.isArray(rawLabels)) throw fail(`: [${g}].labels`, 'expected a mapping of label names to strings');
      for (const [key, value] of Object.entries(rawLabels as Record<string, unknown>)) {
        if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(key)) throw fail(`: [${g}].labels`, `${JSON.stringify(key)} is not a label name`);
        if (typeof value !== 'string') throw fail(`: [${g}].labels.${key}`, 'expected a string');
        labels[key] = value;
      }
    }
    const scheme = labels.__scheme__ ?? 'http';
    if (scheme !== 'http' && scheme !== 'https') throw fail(`: [${g}].labels.__scheme__`, 'expected http or https');
    const named = labels.server;
    if (named !== undefined && targets.length !== 1) throw fail(`: [${g}].labels.server`, 'names a server, so the group must have exactly one target');
    const kept = Object.fromEntries(Object.entries(labels).filter(([key]) => !key.startsWith('__') && key !== 'server'));
    targets.forEach((target: unknown, t) => {
      const where = `${file}: [${g}].targets[${t}]`;
      // host:port only: a URL with a path, credentials or a query is not a file_sd target.
      const url = typeof target === 'string' && /^[A-Za-z0-9.\-_[\]:]+$/.test(target) ? baseUrl(`${scheme}://${target}`) : undefined;
      if (url === undefined) throw fail(`: [${g}].targets[${t}]`, 'expected host:port');
      const name = named ?? (target as string);
      if (!validName(name)) throw fail(`: [${g}].labels.server`, `must be 1 to ${MAX_NAME_LENGTH} characters without control characters`);
      out.push({ server: { name, url, labels: kept }, where });
    });
  });
  return out;
}
