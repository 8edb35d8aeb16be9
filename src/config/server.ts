/** One entry of `servers:`: a Flussonic Media Server to poll. */
import { SESSION_GROUP_BY_ALLOWED, STREAM_FAMILY_GROUPS } from './switches.js';
import { COLLECTOR_NAMES, DEFAULTS, KNOWN_KEYS } from './defaults.js';
import type { Section } from './fields.js';
import { readName, readPollSettings } from './target.js';
import type { CollectorName, Credentials, ServerConfig, ServerSettings, StreamFamilySwitches, StreamFilter } from './types.js';
import { readNamePattern, readBaseUrl, readSecret, type FileContext } from './values.js';

export function readServer(section: Section, globalPollIntervalMs: number, files: FileContext): ServerConfig {
  section.rejectUnknownKeys(KNOWN_KEYS.server);
  return {
    name: readName(section),
    url: readBaseUrl(section, 'url', 'username/password or bearer_token') ?? '',
    ...readServerSettings(section, globalPollIntervalMs, files),
  };
}

/**
 * One entry of `templates:`: every setting of a server but its name and URL, which discovery
 * supplies. Discovered servers get their credentials and settings from here.
 */
export function readTemplate(section: Section, globalPollIntervalMs: number, files: FileContext): ServerSettings {
  section.rejectUnknownKeys(KNOWN_KEYS.template);
  return readServerSettings(section, globalPollIntervalMs, files);
}

function readServerSettings(section: Section, globalPollIntervalMs: number, files: FileContext): ServerSettings {
  const d = DEFAULTS.server;
  return {
    apiPrefix: readApiPrefix(section),
    credentials: readCredentials(section, files),
    ...readPollSettings(section, { ...d, pollIntervalMs: globalPollIntervalMs }),
    collectors: readCollectors(section),
    streams: readStreamFilter(section),
    families: readFamilies(section),
    maxSeries: section.int('max_series', d.maxSeries, { min: 1, max: 100_000_000 }),
    staleAfterMs: section.duration('stale_after', { minMs: 1000 }) ?? d.staleAfterMs,
    sessionsGroupBy: readGroupBy(section),
  };
}

function readApiPrefix(section: Section): string {
  const prefix = section.string('api_prefix');
  if (prefix === undefined) return DEFAULTS.server.apiPrefix;
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(prefix)) {
    section.report('api_prefix', `must be a path starting with / (e.g. ${DEFAULTS.server.apiPrefix}), got ${section.run.show(section.at('api_prefix'), prefix)}`);
    return DEFAULTS.server.apiPrefix;
  }
  return prefix.replace(/\/+$/, '');
}

/** Basic auth (username + password or password_file), Bearer (bearer_token or _file), or none. */
function readCredentials(section: Section, files: FileContext): Credentials {
  const username = section.string('username');
  const password = readSecret(section, 'password', 'password_file', files);
  const token = readSecret(section, 'bearer_token', 'bearer_token_file', files);
  const passwordGiven = section.has('password') || section.has('password_file');
  const basicGiven = section.has('username') || passwordGiven;
  const bearerGiven = section.has('bearer_token') || section.has('bearer_token_file');
  if (basicGiven && bearerGiven) {
    section.report(section.has('bearer_token_file') ? 'bearer_token_file' : 'bearer_token', 'set either username/password (Basic) or a bearer token, not both');
    return { kind: 'none' };
  }
  if (bearerGiven) return token === undefined ? { kind: 'none' } : { kind: 'bearer', token };
  if (!basicGiven) return { kind: 'none' };
  if (!section.has('username')) section.report(section.has('password_file') ? 'password_file' : 'password', 'needs username too');
  else if (!passwordGiven) section.report('username', 'needs password or password_file too');
  if (username?.includes(':')) {
    section.report('username', 'must not contain ":" (HTTP Basic auth cannot carry it)');
    return { kind: 'none' };
  }
  return username !== undefined && password !== undefined ? { kind: 'basic', username, password } : { kind: 'none' };
}

function readCollectors(section: Section): Readonly<Record<CollectorName, boolean>> {
  const sub = section.section('collectors');
  const defaults = DEFAULTS.server.collectors;
  if (!sub) return defaults;
  sub.rejectUnknownKeys(KNOWN_KEYS.serverCollectors);
  const out = {} as Record<CollectorName, boolean>;
  for (const name of COLLECTOR_NAMES) out[name] = sub.bool(name, defaults[name]);
  return out;
}

function readStreamFilter(section: Section): StreamFilter {
  const sub = section.section('streams');
  if (!sub) return {};
  sub.rejectUnknownKeys(KNOWN_KEYS.serverStreams);
  const include = readNamePattern(sub, 'include');
  const exclude = readNamePattern(sub, 'exclude');
  return { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) };
}

function readFamilies(section: Section): StreamFamilySwitches {
  const sub = section.section('families');
  const d = DEFAULTS.server.families;
  if (!sub) return d;
  sub.rejectUnknownKeys(KNOWN_KEYS.serverFamilies);
  return Object.fromEntries(STREAM_FAMILY_GROUPS.map((g) => [g, sub.bool(g, d[g])])) as StreamFamilySwitches;
}

function readGroupBy(section: Section): readonly string[] {
  const sub = section.section('sessions');
  const fallback = DEFAULTS.server.sessionsGroupBy;
  if (!sub) return fallback;
  sub.rejectUnknownKeys(KNOWN_KEYS.serverSessions);
  if (!sub.has('group_by')) return fallback;
  const allowed: readonly string[] = SESSION_GROUP_BY_ALLOWED;
  const labels: string[] = [];
  sub.list('group_by').forEach((label, index) => {
    const at = [...sub.at('group_by'), index];
    if (typeof label !== 'string' || !allowed.includes(label)) {
      sub.run.report(at, `expected one of ${allowed.join(', ')}, got ${sub.run.show(at, label)}`);
    } else if (labels.includes(label)) {
      sub.run.report(at, `${label} is listed twice`);
    } else {
      labels.push(label);
    }
  });
  return labels;
}
