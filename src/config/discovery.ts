/**
 * `templates:` and `discovery:`. A template is a server entry without `name` and `url`; each
 * discovery source names one, and every server it finds is that template plus the discovered name
 * and URL, so discovered servers are validated once, here, like static ones.
 */
import { isAbsolute, resolve } from 'node:path';
import { DEFAULTS, KNOWN_KEYS } from './defaults.js';
import { Section } from './fields.js';
import { readTemplate } from './server.js';
import type { DiscoverySource, ServerSettings } from './types.js';
import type { FileContext } from './values.js';

export function readTemplates(top: Section, globalPollIntervalMs: number, files: FileContext): Map<string, ServerSettings> {
  const out = new Map<string, ServerSettings>();
  const section = top.section('templates');
  if (!section) return out;
  for (const name of section.keys()) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
      section.report(name, 'a template name has 1 to 64 letters, digits, _ . -');
      continue;
    }
    const entry = Section.of(section.run, section.at(name), section.value(name));
    if (entry) out.set(name, readTemplate(entry, globalPollIntervalMs, files));
  }
  return out;
}

export function readDiscovery(top: Section, templates: ReadonlyMap<string, ServerSettings>, files: FileContext): DiscoverySource[] {
  const section = top.section('discovery');
  if (!section) return [];
  section.rejectUnknownKeys(KNOWN_KEYS.discovery);
  const refreshMs = section.duration('refresh_interval', { minMs: 1000 }) ?? DEFAULTS.discoveryRefreshMs;
  const sources: DiscoverySource[] = [];
  const names = new Map<string, string>();
  const each = (key: 'cluster_peers' | 'file_sd', read: (entry: Section, name: string, template: string, refreshIntervalMs: number) => DiscoverySource) => {
    section.list(key).forEach((item, index) => {
      const entry = Section.of(section.run, [...section.at(key), index], item);
      if (!entry) return;
      entry.rejectUnknownKeys(key === 'cluster_peers' ? KNOWN_KEYS.discoveryClusterPeers : KNOWN_KEYS.discoveryFileSd);
      const name = entry.string('name') ?? `${key}-${index}`;
      const earlier = names.get(name);
      if (earlier !== undefined) entry.report('name', `duplicate discovery name ${JSON.stringify(name)} (already used by ${earlier})`);
      names.set(name, entry.path);
      const template = entry.string('template', { required: true }) ?? '';
      if (template !== '' && !templates.has(template)) {
        const known = [...templates.keys()];
        entry.report('template', `no template ${JSON.stringify(template)} under templates:${known.length > 0 ? ` (known: ${known.join(', ')})` : ' (add one: a server entry without name and url)'}`);
      }
      const refreshIntervalMs = entry.duration('refresh_interval', { minMs: 1000 }) ?? refreshMs;
      sources.push(read(entry, name, template, refreshIntervalMs));
    });
  };
  each('cluster_peers', (entry, name, template, refreshIntervalMs) => ({ kind: 'cluster_peers', name, template, refreshIntervalMs, seeds: readSeeds(entry) }));
  each('file_sd', (entry, name, template, refreshIntervalMs) => ({ kind: 'file_sd', name, template, refreshIntervalMs, files: readFiles(entry, files) }));
  return sources;
}

/** Seed URLs: http(s), without credentials (the template has them), query or fragment. */
function readSeeds(entry: Section): string[] {
  const seeds: string[] = [];
  const list = entry.list('seeds');
  if (list.length === 0) entry.report('seeds', 'required: a list of one or more seed server URLs');
  list.forEach((value, index) => {
    const at = [...entry.at('seeds'), index];
    let url: URL | undefined;
    try {
      url = typeof value === 'string' ? new URL(value.trim()) : undefined;
    } catch {
      url = undefined;
    }
    // The value is never echoed: a mistyped URL may carry a password.
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) entry.run.report(at, 'not an http(s) URL');
    else if (url.username !== '' || url.password !== '') entry.run.report(at, 'must not contain credentials; the template has them');
    else if (url.search !== '' || url.hash !== '') entry.run.report(at, 'must not have a query string or fragment');
    else seeds.push(`${url.origin}${url.pathname.replace(/\/+$/, '')}`);
  });
  return seeds;
}

/** File paths, relative ones against the config's directory; `*` only in the file name. */
function readFiles(entry: Section, files: FileContext): string[] {
  const out: string[] = [];
  const list = entry.list('files');
  if (list.length === 0) entry.report('files', 'required: a list of one or more target files (JSON or YAML, as Prometheus file_sd)');
  list.forEach((value, index) => {
    const at = [...entry.at('files'), index];
    if (typeof value !== 'string' || value.trim() === '') return entry.run.report(at, 'expected a file path');
    const path = isAbsolute(value) ? value : resolve(files.baseDir, value);
    if (/[*?[]/.test(path.slice(0, path.lastIndexOf('/')))) return entry.run.report(at, 'a pattern (*) is allowed only in the file name, not in the directory');
    if (!/\.(json|ya?ml)$/i.test(path)) return entry.run.report(at, 'must end in .json, .yml or .yaml (as Prometheus file_sd)');
    out.push(path);
  });
  return out;
}
