/** One entry of `catena:`: the operations log of a Catena subscriber-management service. */
import { isAbsolute, resolve } from 'node:path';
import { DEFAULTS, KNOWN_KEYS } from './defaults.js';
import { parseDuration } from './duration.js';
import { Section } from './fields.js';
import { readName, readPollSettings } from './target.js';
import type { CatenaConfig, CatenaPrice } from './types.js';
import { readBaseUrl, readSecret, type FileContext } from './values.js';

export function readCatena(section: Section, files: FileContext): CatenaConfig {
  section.rejectUnknownKeys(KNOWN_KEYS.catena);
  const stateFile = section.string('state_file');
  return {
    name: readName(section),
    url: readBaseUrl(section, 'url', 'api_key or api_key_file') ?? '',
    apiKey: readApiKey(section, files),
    ...readPollSettings(section, DEFAULTS.catena),
    start: readStart(section),
    maxClockSkewMs: section.duration('max_clock_skew', { minMs: 0 }) ?? DEFAULTS.catena.maxClockSkewMs,
    ...(stateFile !== undefined ? { stateFile: isAbsolute(stateFile) ? stateFile : resolve(files.baseDir, stateFile) } : {}),
    query: readQuery(section),
    prices: readPrices(section),
    ...(section.has('shard') ? { shard: section.int('shard', 0, { min: 0, max: 9999 }) } : {}),
  };
}

function readApiKey(section: Section, files: FileContext): string {
  const key = readSecret(section, 'api_key', 'api_key_file', files);
  if (key === undefined && !section.has('api_key') && !section.has('api_key_file')) {
    section.report('api_key', 'required (or api_key_file): the operations log needs an API key');
  }
  return key ?? '';
}

/** `now` (only operations from the first poll on) or how much history to read at first start. */
function readStart(section: Section): CatenaConfig['start'] {
  const value = section.value('start');
  if (value === undefined || value === null || value === 'now') return { kind: 'now' };
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || ms <= 0) {
    section.report('start', `expected now or a positive duration of history (e.g. 24h), got ${section.run.show(section.at('start'), value)}`);
    return { kind: 'now' };
  }
  return { kind: 'history', ms };
}

/** Query parameter names of the operations log (the service does not publish them). */
function readQuery(section: Section): CatenaConfig['query'] {
  const d = DEFAULTS.catena.query;
  const sub = section.section('query');
  if (!sub) return { type: d.type, createdFrom: d.created_from, createdBefore: d.created_before, subscriber: d.subscriber };
  sub.rejectUnknownKeys(KNOWN_KEYS.catenaQuery);
  const name = (key: keyof typeof d): string => {
    const value = sub.string(key);
    if (value === undefined) return d[key];
    if (!/^[A-Za-z0-9_.\-[\]]+$/.test(value)) {
      sub.report(key, `${sub.run.show(sub.at(key), value)} is not a query parameter name (letters, digits, _ . - [ ])`);
      return d[key];
    }
    return value;
  };
  return { type: name('type'), createdFrom: name('created_from'), createdBefore: name('created_before'), subscriber: name('subscriber') };
}

/** `prices: { <packageId>: { amount, per, currency } }`. */
function readPrices(section: Section): ReadonlyMap<string, CatenaPrice> {
  const prices = new Map<string, CatenaPrice>();
  const sub = section.section('prices');
  if (!sub) return prices;
  for (const packageId of sub.keys()) {
    const entry = Section.of(sub.run, sub.at(packageId), sub.value(packageId));
    if (!entry) continue;
    entry.rejectUnknownKeys(KNOWN_KEYS.catenaPrice);
    const amount = entry.number('amount', { min: 0, required: true });
    const perMs = entry.duration('per', { minMs: 1000, required: true });
    const currency = entry.string('currency', { required: true });
    if (amount !== undefined && perMs !== undefined && currency !== undefined) prices.set(packageId, { amount, perMs, currency });
  }
  return prices;
}
