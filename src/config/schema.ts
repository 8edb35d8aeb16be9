/**
 * Every setting of the config file, declared once: its kind, default, bounds, help text, and by
 * where it is declared, where it is allowed. The validated config types, the validation itself,
 * config.schema.json and docs/configuration.md all come from here (`npm run docs:config`).
 */
import { usableCpus } from '../lib/cpu-limit.js';
import { z } from 'zod';
import { always, baseUrl, uniqueNames, bool, duration, fail, filePath, help, int, mapping, namePattern, num, secret, secretFile, section, shaped, size, switches, text, typed, unique, urlProblem, type Say } from './kinds.js';
import { COLLECTOR_DEFAULTS, SESSION_GROUP_BY_ALLOWED, SESSION_GROUP_BY_DEFAULT, STREAM_FAMILY_GROUPS, type CollectorName, type StreamFamilyGroup } from './switches.js';
import { formatDuration, parseDuration } from '../lib/units.js';
import { MAX_CONFIG_BYTES, readFileCapped } from '../lib/read-capped.js';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_SERVER, DEFAULT_MAX_DISCOVERED, DEFAULT_MAX_LABEL_VALUE_BYTES, MAX_NAME_LENGTH } from './bounds.js';
import { eventsSection } from './events-schema.js';
import { metricsPathProblem, parseListenAddress, pollDeadlineMs } from './values.js';

/** What validation of one file knows besides the file. */
export interface SchemaContext {
  /** Relative `*_file`, `state_file` and `files` paths are resolved against it. */
  readonly baseDir: string;
  /** Paths the HTTP server has other routes on: `metrics_path` must be none of them. */
  readonly reservedPaths: readonly string[];
  /** The top-level `poll_interval`: the default of every server's. */
  readonly pollIntervalMs: number;
  /** The names under `templates:` (a discovery source must name one). */
  readonly templateNames: readonly string[];
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
const MIN_POLL_INTERVAL = 100;
const NAME_HELP = 'unique within its list; the value of the target\'s label and how logs name it';

const name = (example: string) =>
  text()
    .refine((s) => s.length <= MAX_NAME_LENGTH && !/\p{Cc}/u.test(s), { params: { say: (() => `must be at most ${MAX_NAME_LENGTH} characters without control characters`) as Say } })
    .meta(help(NAME_HELP, example));

/** `poll_interval`, `timeout`, `page_size`, `max_pages`, `max_response_size`: how a target is polled and how much one poll reads. */
const pollShape = (pageSize: number) => ({
  timeout: duration(1).optional().meta(help('timeout of one request; must be below the poll interval. Default: min(10s, the poll deadline), so a short poll_interval works', '10s')),
  page_size: int(1, 100_000).default(pageSize).meta(help('the most items one page of a list asks for (fewer while pages would pass 1.5 MiB)')),
  max_pages: int(1, 1_000_000).default(10_000).meta(help('page cap of one list walk (guards a walk that never ends)')),
  max_response_size: size(1024, '1KiB').prefault('64MiB').meta(help('response body cap (e.g. 64MiB, 500KB = 500,000 bytes)')),
});

/** The timeout when none is set: min(10s, the poll's own deadline), so a slow request ends as its own timeout. */
export const defaultTimeoutMs = (defaultMs: number, pollIntervalMs: number): number => Math.max(1, Math.floor(Math.min(defaultMs, pollDeadlineMs(pollIntervalMs))));

/** An explicit timeout must be below the poll interval (`fallbackMs` when the entry sets none). */
const timeoutBelowInterval = (fallbackMs: number) =>
  always((v, ctx) => {
    const interval = v.poll_interval ?? fallbackMs;
    if (typeof v.timeout !== 'number' || typeof interval !== 'number' || v.timeout < interval) return;
    fail(ctx, v.timeout, () => `${formatDuration(v.timeout as number)} must be below the poll interval (${formatDuration(interval)}); set a shorter timeout or a longer poll_interval (without timeout the default is min(10s, the poll deadline))`, ['timeout']);
  });

const pollSettings = (v: z.output<z.ZodObject<ReturnType<typeof pollShape>>>, pollIntervalMs: number) => ({
  pollIntervalMs,
  timeoutMs: v.timeout ?? defaultTimeoutMs(10_000, pollIntervalMs),
  pageSize: v.page_size,
  maxPages: v.max_pages,
  maxResponseBytes: v.max_response_size,
});

const COLLECTOR_HELP: Record<CollectorName, string> = {
  streams: 'streams and their inputs (GET /streams)',
  sessions: 'viewer sessions, aggregated by sessions.group_by (GET /sessions)',
  server: 'version, license and resources of the server (GET /config/stats)',
  dvrs: 'DVR storage (GET /dvrs)',
  cluster: 'the peers this server sees (GET /cluster/peers)',
};

/** Every setting of a Flussonic server but its name and URL: `servers[]` and `templates.NAME`. */
const serverSettingsShape = (c: SchemaContext) => ({
  api_prefix: shaped((s) => /^\/[A-Za-z0-9._~\-/]*$/.test(s), (shown) => `must be a path starting with / (e.g. /streamer/api/v3), got ${shown}`, (s) => s.replace(/\/+$/, ''))
    .prefault('/streamer/api/v3')
    .meta(help('path of the API under the URL')),
  username: text().optional().meta(help('HTTP Basic auth user (with password or password_file)', 'monitor')),
  password: secret().optional().meta(help('HTTP Basic auth password', '${FLUSSONIC_PASSWORD}')),
  password_file: secretFile(c.baseDir).optional().meta(help('file holding the password (trailing newline trimmed)')),
  bearer_token: secret().optional().meta(help('Bearer token (instead of username/password)')),
  bearer_token_file: secretFile(c.baseDir).optional().meta(help('file holding the Bearer token')),
  poll_interval: duration(MIN_POLL_INTERVAL).optional().meta(help('how often the server is polled (default: the top-level poll_interval)')),
  ...pollShape(1000),
  tls_ca_file: filePath(c.baseDir)
    .transform((path, ctx) => {
      const read = readFileCapped(path, MAX_CONFIG_BYTES);
      if (!read.ok) return fail(ctx, path, () => `cannot read ${path} (${read.reason})`);
      return read.text.includes('-----BEGIN CERTIFICATE-----') ? read.text : fail(ctx, path, () => `${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    })
    .optional()
    .meta(help('PEM file of the CA certificates that sign the server\'s certificate, for an https url with a private CA (default: the CAs Node.js trusts)')),
  collectors: switches(COLLECTOR_DEFAULTS, (key) => `run the ${key} collector: ${COLLECTOR_HELP[key]}`).meta(help('which collectors run')),
  streams: section({
    include: namePattern().optional().meta(help('only streams whose whole name matches (RE2)')),
    exclude: namePattern().optional().meta(help('no streams whose whole name matches (RE2)')),
  }).meta(help('which streams are exported (default: all)')),
  families: switches(Object.fromEntries(STREAM_FAMILY_GROUPS.map((g) => [g, false])) as Record<StreamFamilyGroup, boolean>, (g) => `the optional ${g} families of each stream (docs/cardinality.md)`).meta(
    help('optional per-stream families (all off: at most 20 series per stream)'),
  ),
  max_series: int(1, 100_000_000).default(500_000).meta(help('cap of series per collector: over it optional, then default families are shed, and only then core series dropped')),
  max_label_value_bytes: int(32, 1_048_576).optional().meta({ default: DEFAULT_MAX_LABEL_VALUE_BYTES }).meta(
    help('longest label value written, in UTF-8 bytes: a longer one (a stream name) is cut at a character boundary and ends in ~ and 8 hex digits of a hash of the whole value, so distinct values stay distinct series; counted in flussonic_exporter_label_values_truncated_total'),
  ),
  events_secret: secret().optional().meta(help('the secret of this server\'s event sink (POST /events/<name>, docs/events.md): in the sink URL as userinfo or ?token=')),
  events_secret_file: secretFile(c.baseDir).optional().meta(help('file holding the event sink secret')),
  max_connections: int(1, 64).optional().meta({ default: DEFAULT_MAX_CONNECTIONS_PER_SERVER }).meta(help('most connections open to this server at once (its collectors run side by side)')),
  sessions: section({
    group_by: z
      .array(z.enum(SESSION_GROUP_BY_ALLOWED))
      .check(unique((label) => `${label} is listed twice`))
      .default([...SESSION_GROUP_BY_DEFAULT])
      .meta(help('labels the sessions are aggregated by')),
  }).meta(help('session aggregation')),
});

type SettingsInput = z.output<z.ZodObject<ReturnType<typeof serverSettingsShape>>>;

const SECRET_PAIRS = [['password', 'password_file'], ['bearer_token', 'bearer_token_file'], ['events_secret', 'events_secret_file']] as const;

/** Basic (username + password), Bearer, or none; the two ways of one secret exclude each other. */
const credentialsCheck = always((v, ctx) => {
  const has = (key: string) => v[key] !== undefined;
  const passwordGiven = has('password') || has('password_file');
  const bearerGiven = has('bearer_token') || has('bearer_token_file');
  if ((has('username') || passwordGiven) && bearerGiven) fail(ctx, undefined, () => 'set either username/password (Basic) or a bearer token, not both', [has('bearer_token_file') ? 'bearer_token_file' : 'bearer_token']);
  else if (passwordGiven && !has('username')) fail(ctx, undefined, () => 'needs username too', [has('password_file') ? 'password_file' : 'password']);
  else if (has('username') && !passwordGiven) fail(ctx, undefined, () => 'needs password or password_file too', ['username']);
  if (typeof v.username === 'string' && v.username.includes(':')) fail(ctx, undefined, () => 'must not contain ":" (HTTP Basic auth cannot carry it)', ['username']);
});

const credentials = (v: SettingsInput) => {
  const password = v.password ?? v.password_file;
  const token = v.bearer_token ?? v.bearer_token_file;
  if (token !== undefined) return { kind: 'bearer' as const, token };
  if (v.username !== undefined && password !== undefined) return { kind: 'basic' as const, username: v.username, password };
  return { kind: 'none' as const };
};

/** Set on a discovered server by the target set (src/fleet/target-set.ts), never from the file. */
export interface DiscoveredGuard {
  /** discovery.allow_loopback: loopback addresses may be polled; link-local ones never. */
  readonly allowLoopback: boolean;
}

const serverSettings = (v: SettingsInput & { stale_after?: number }, pollIntervalMs: number) => ({
  apiPrefix: v.api_prefix,
  credentials: credentials(v),
  ...pollSettings(v, v.poll_interval ?? pollIntervalMs),
  collectors: v.collectors,
  streams: { ...(v.streams.include ? { include: v.streams.include } : {}), ...(v.streams.exclude ? { exclude: v.streams.exclude } : {}) },
  families: v.families,
  maxSeries: v.max_series,
  // Present only when set: the defaults (src/config/bounds.ts) apply where they are read.
  ...(v.max_label_value_bytes !== undefined ? { maxLabelValueBytes: v.max_label_value_bytes } : {}),
  ...(v.max_connections !== undefined ? { maxConnections: v.max_connections } : {}),
  ...((v.events_secret ?? v.events_secret_file) !== undefined ? { eventsSecret: (v.events_secret ?? v.events_secret_file)! } : {}),
  ...({} as { addressGuard?: DiscoveredGuard }),
  // Set by the target set when the event sink receiver is on: polls report the streams exported.
  ...({} as { reportStreams?: boolean }),
  ...(v.tls_ca_file !== undefined ? { tlsCa: v.tls_ca_file } : {}),
  staleAfterMs: v.stale_after ?? STALE_AFTER_MS,
  sessionsGroupBy: v.sessions.group_by as readonly string[],
});
const STALE_AFTER_MS = 600_000;

const server = (c: SchemaContext) =>
  mapping({
    name: name('edge-1'),
    url: baseUrl('use username/password or bearer_token').meta(help('http(s) base URL of the server, without credentials', 'http://flussonic-1:80')),
    ...serverSettingsShape(c),
    stale_after: duration(1000).prefault(formatDuration(STALE_AFTER_MS)).meta(help('session groups with no session listed for this long are withdrawn and freed')),
  }, SECRET_PAIRS)
    .check(credentialsCheck, timeoutBelowInterval(c.pollIntervalMs))
    .transform((v) => ({ name: v.name, url: v.url, ...serverSettings(v, c.pollIntervalMs) }));

const template = (c: SchemaContext) =>
  mapping(serverSettingsShape(c), SECRET_PAIRS)
    .check(credentialsCheck, timeoutBelowInterval(c.pollIntervalMs))
    .transform((v) => serverSettings(v, c.pollIntervalMs));

const QUERY_NAME: Say = (shown) => `${shown} is not a query parameter name (letters, digits, _ . - [ ])`;
const queryName = (fallback: string, what: string) => shaped((s) => /^[A-Za-z0-9_.\-[\]]+$/.test(s), QUERY_NAME).prefault(fallback).meta(help(what));
const START: Say = (shown) => `expected now or a positive duration of history (e.g. 24h), got ${shown}`;

const catena = (c: SchemaContext) =>
  mapping({
    name: name('main'),
    url: baseUrl('use api_key or api_key_file').meta(help('http(s) base URL of the service; /tv-management/api/v1/operations is appended', 'http://catena.example')),
    api_key: secret().optional().meta(help('API key of the operations log, sent as X-Auth-Token (or api_key_file)', '${CATENA_API_KEY}')),
    api_key_file: secretFile(c.baseDir).optional().meta(help('file holding the API key')),
    poll_interval: duration(MIN_POLL_INTERVAL).prefault('1m').meta(help('how often the service is polled')),
    ...pollShape(500),
    start: typed(z.string(), START)
      .transform((s, ctx) => {
        if (s === 'now') return { kind: 'now' as const };
        const ms = parseDuration(s);
        return ms !== undefined && ms > 0 ? { kind: 'history' as const, ms } : fail(ctx, s, START);
      })
      .prefault('now')
      .meta({ title: 'now or duration' })
      .meta(help('now (operations from the first poll on) or how much history to read at first start, e.g. 24h')),
    max_clock_skew: duration(0).prefault('5m').meta(help('records created further ahead of the exporter\'s clock are not counted yet')),
    state_file: filePath(c.baseDir).optional().meta(help('where the read position is kept across restarts')),
    query: section({
      type: queryName('type', 'parameter for the operation type'),
      created_from: queryName('createdAt_gte', 'parameter for the start of the time range'),
      created_before: queryName('createdAt_lt', 'parameter for the end of the time range'),
      subscriber: queryName('subscriberId', 'parameter for the subscriber'),
    }).meta(help('query parameter names of the operations log (the service does not publish them)')),
    prices: z
      .record(
        z.string(),
        mapping({
          amount: num(0).meta(help('price per period', 9.99)),
          per: duration(1000).meta(help('the period the amount is for', '30d')),
          currency: text().meta(help('value of the currency label of flussonic_catena_billed_amount_total', 'EUR')),
        }),
      )
      .prefault({})
      .meta({ ...help('price of each package, by package id: { amount, per, currency }'), 'x-name': ['pkg-basic', 'the packageId'] }),
    shard: int(0, 9999).optional().meta(help('which replica polls the service when sharded (default 0; wraps around total_shards)')),
  }, [['api_key', 'api_key_file']])
    .check(
      always((v, ctx) => {
        if (v.api_key === undefined && v.api_key_file === undefined) fail(ctx, undefined, () => 'required (or api_key_file): the operations log needs an API key', ['api_key']);
      }),
      timeoutBelowInterval(60_000),
    )
    .transform((v) => ({
      name: v.name,
      url: v.url,
      apiKey: (v.api_key ?? v.api_key_file)!,
      ...pollSettings(v, v.poll_interval),
      start: v.start,
      maxClockSkewMs: v.max_clock_skew,
      ...(v.state_file !== undefined ? { stateFile: v.state_file } : {}),
      query: { type: v.query.type, createdFrom: v.query.created_from, createdBefore: v.query.created_before, subscriber: v.query.subscriber },
      prices: new Map(Object.entries(v.prices).map(([id, p]) => [id, { amount: p.amount, perMs: p.per, currency: p.currency }])) as ReadonlyMap<string, { amount: number; perMs: number; currency: string }>,
      ...(v.shard !== undefined ? { shard: v.shard } : {}),
    }));

const seedUrl = typed(z.string(), () => 'not an http(s) URL').transform((text, ctx) => {
  const url = urlProblem(text, 'the template has them');
  if (typeof url === 'string') return fail(ctx, text, () => (url.startsWith('not an') ? 'not an http(s) URL' : url));
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}).meta({ title: 'URL' });

const targetFile = (baseDir: string) =>
  typed(z.string(), () => 'expected a file path').transform((value, ctx) => {
    if (value.trim() === '') return fail(ctx, value, () => 'expected a file path');
    const path = filePath(baseDir).parse(value);
    if (/[*?[]/.test(path.slice(0, path.lastIndexOf('/')))) return fail(ctx, value, () => 'a pattern (*) is allowed only in the file name, not in the directory');
    if (!/\.(json|ya?ml)$/i.test(path)) return fail(ctx, value, () => 'must end in .json, .yml or .yaml (as Prometheus file_sd)');
    return path;
  }).meta({ title: 'file path' });

const source = <S extends z.core.$ZodLooseShape>(c: SchemaContext, example: string, list: S) =>
  mapping({
    name: text().optional().meta(help('the source label of the discovery self-metrics (default: KIND-INDEX)', example)),
    ...list,
    template: text()
      .refine((t) => c.templateNames.includes(t), {
        params: { say: ((shown: string, t: unknown) => `no template ${JSON.stringify(t)} under templates:${c.templateNames.length > 0 ? ` (known: ${c.templateNames.join(', ')})` : ' (add one: a server entry without name and url)'}`) as Say },
      })
      .meta(help('the templates: entry every discovered server takes its settings from', 'edge')),
    refresh_interval: duration(1000).optional().meta(help('how often this source is re-read (default: discovery.refresh_interval)')),
    max_targets: int(1, 1_000_000).optional().meta(help('most servers this source may list (default: discovery.max_targets_per_source); a longer list is refused whole and the last good one kept')),
  });

const discovery = (c: SchemaContext) =>
  section({
    refresh_interval: duration(1000).prefault('1m').meta(help('how often each discovery source is re-read')),
    max_targets_per_source: int(1, 1_000_000).optional().meta({ default: DEFAULT_MAX_DISCOVERED }).meta(
      help('most servers one source may list: a longer list is refused whole, the last good list is kept, and the refusal logged and counted in flussonic_exporter_discovery_refused_total{reason="source_cap"}'),
    ),
    max_targets: int(1, 1_000_000).optional().meta({ default: DEFAULT_MAX_DISCOVERED }).meta(
      help('most servers all sources together may list: a refresh that would pass it is refused whole (its source keeps its last good list; reason="total_cap")'),
    ),
    allow_loopback: bool().optional().meta({ default: false }).meta(
      help('poll discovered servers whose address resolves to loopback (127.0.0.0/8, ::1); link-local addresses (169.254.0.0/16, fe80::/10) are refused for discovered servers always. Static servers may use any address'),
    ),
    cluster_peers: z
      .array(source(c, 'cluster', { seeds: z.array(seedUrl).prefault([]).check(nonEmpty('required: a list of one or more seed server URLs')).meta({ minItems: 1 }).meta(help('URLs of the seed servers (no credentials: the template has them)', ['http://flussonic-1:80'])) }))
      .prefault([])
      .meta(help('one server per peer that GET /cluster/peers of the seeds lists, named by its hostname, at its api_url')),
    file_sd: z
      .array(source(c, 'inventory', { files: z.array(targetFile(c.baseDir)).prefault([]).check(nonEmpty('required: a list of one or more target files (JSON or YAML, as Prometheus file_sd)')).meta({ minItems: 1 }).meta(help('Prometheus file_sd target files (JSON or YAML; * in the file name)', ['targets/*.json'])) }))
      .prefault([])
      .meta(help('Prometheus file_sd target files: one server per target')),
  })
    .check(
      uniqueNames([['cluster_peers', 'file_sd']], (n, earlier) => `duplicate discovery name ${JSON.stringify(n)} (already used by discovery.${earlier})`, (list, i) => `${list}-${i}`),
    )
    .transform((v) => {
      const cap = (e: { max_targets?: number | undefined }) => (e.max_targets !== undefined ? { maxTargets: e.max_targets } : {});
      // Present only when set: the defaults (src/config/bounds.ts) apply where they are read.
      const limits: DiscoveryLimits = {
        ...(v.max_targets !== undefined ? { maxTargets: v.max_targets } : {}),
        ...(v.max_targets_per_source !== undefined ? { maxTargetsPerSource: v.max_targets_per_source } : {}),
        ...(v.allow_loopback !== undefined ? { allowLoopback: v.allow_loopback } : {}),
      };
      return {
        sources: [
          ...v.cluster_peers.map((e, i) => ({ kind: 'cluster_peers' as const, name: e.name ?? `cluster_peers-${i}`, template: e.template, refreshIntervalMs: e.refresh_interval ?? v.refresh_interval, ...cap(e), seeds: e.seeds })),
          ...v.file_sd.map((e, i) => ({ kind: 'file_sd' as const, name: e.name ?? `file_sd-${i}`, template: e.template, refreshIntervalMs: e.refresh_interval ?? v.refresh_interval, ...cap(e), files: e.files })),
        ],
        limits,
      };
    });

function nonEmpty(say: string) {
  return z.superRefine<unknown[]>((items, ctx) => (items.length === 0 ? fail(ctx, items, () => say) : undefined));
}

const TEMPLATE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** The top-level `poll_interval` (validation reads it first: it is every server's default). */
export const POLL_INTERVAL = duration(MIN_POLL_INTERVAL).prefault('15s');

/** The whole file. */
export const configSchema = (c: SchemaContext) =>
  mapping({
    listen_address: text()
      .transform((s, ctx) => {
        const parsed = parseListenAddress(s);
        return typeof parsed === 'string' ? fail(ctx, s, () => parsed) : parsed;
      })
      .prefault(':9228')
      .meta(help('HOST:PORT of the HTTP server (:9228 every IPv4 interface, [::]:9228 IPv6 too); --web.listen-address overrides it')),
    metrics_path: text()
      .transform((s, ctx) => (metricsPathProblem(s, c.reservedPaths) ? fail(ctx, s, (shown) => metricsPathProblem(s, c.reservedPaths, shown)!) : s))
      .prefault('/metrics')
      .meta(help('path of the exposition: one clean path like /metrics (no //, . or .. segment, ?, # or %; a trailing / is ignored) that no other route takes (/, /-/healthy, /events/NAME, ...)')),
    log_level: z.enum(LOG_LEVELS).default('info').meta(help('least severe level logged')),
    poll_interval: POLL_INTERVAL.meta(help('poll interval of every server without its own')),
    workers: int(0, 256).optional().meta(help('worker threads that poll (default: one per core the process may use). 0 polls on the serving thread, for one small server (up to about 1,000 streams): one thread and 15-20 MB less, for about a third more CPU per poll, and a scrape that comes during a poll waits for the poll\'s next pause. Takes effect at the next restart')),
    max_connections: int(1, 1_000_000).optional().meta({ default: DEFAULT_MAX_CONNECTIONS }).meta(
      help('most connections to upstream servers open at once in the whole process, split evenly over the worker threads (each gets max_connections / workers, at least 1; all of it with workers: 0); a poll that finds none free waits while idle ones are closed. Takes effect at the next restart'),
    ),
    servers: z.array(server(c)).prefault([]).meta(help('Flussonic Media Servers to poll')),
    catena: z.array(catena(c)).prefault([]).meta(help('Catena operations logs to poll (docs/catena.md)')),
    templates: z
      .record(z.string(), template(c))
      .prefault({})
      .check(always((v, ctx) => Object.keys(v).forEach((k) => (TEMPLATE_NAME.test(k) ? undefined : fail(ctx, k, () => 'a template name has 1 to 64 letters, digits, _ . -', [k])))))
      .meta({ ...help('settings of discovered servers by name: a server entry without name and url'), 'x-name': ['edge', 'the template\'s name, used by discovery sources'] }),
    discovery: discovery(c).meta(help('where servers are discovered (docs/fleet.md)')),
    events: eventsSection().meta(help('the event sink receiver: counts what Flussonic pushes between two polls (docs/events.md)')),
  })
    .check(
      uniqueNames([['servers'], ['catena']], (n, earlier) => `duplicate name ${JSON.stringify(n)} (already used by ${earlier}); names must be unique`),
    )
    .transform((v) => ({
      listenAddress: v.listen_address,
      metricsPath: v.metrics_path,
      logLevel: v.log_level,
      pollIntervalMs: v.poll_interval,
      workers: v.workers ?? usableCpus(),
      servers: v.servers,
      catena: v.catena,
      ...(Object.keys(v.templates).length > 0 ? { templates: new Map(Object.entries(v.templates)) as ReadonlyMap<string, z.output<ReturnType<typeof template>>> } : {}),
      ...(v.discovery.sources.length > 0 ? { discovery: v.discovery.sources } : {}),
      // Present only when set: the defaults (src/config/bounds.ts) apply where they are read.
      ...(v.max_connections !== undefined ? { maxConnections: v.max_connections } : {}),
      ...(Object.keys(v.discovery.limits).length > 0 ? { discoveryLimits: v.discovery.limits } : {}),
      // Present only when the receiver is on.
      ...(v.events.enabled ? { events: v.events } : {}),
    }));

/** discovery.max_targets, max_targets_per_source and allow_loopback. */
export interface DiscoveryLimits {
  readonly maxTargets?: number;
  readonly maxTargetsPerSource?: number;
  readonly allowLoopback?: boolean;
}

/** Plain data all the way down: the validated config is never changed once made. */
type Frozen<T> = T extends ReadonlyMap<infer K, infer V> ? ReadonlyMap<K, Frozen<V>> : T extends readonly (infer U)[] ? readonly Frozen<U>[] : T extends object ? { readonly [P in keyof T]: Frozen<T[P]> } : T;

/** The validated config: defaults applied, durations in ms, sizes in bytes, secrets read. */
export type ExporterConfig = Frozen<z.output<ReturnType<typeof configSchema>>>;
export type ServerConfig = ExporterConfig['servers'][number];
/** A server's settings without its name and URL: a `templates:` entry, for discovered servers. */
export type ServerSettings = Omit<ServerConfig, 'name' | 'url'>;
export type CatenaConfig = ExporterConfig['catena'][number];
export type CatenaPrice = CatenaConfig['prices'] extends ReadonlyMap<string, infer P> ? P : never;
/** Resolved credentials: never logged, never rendered, never put into an error message. */
export type Credentials = ServerConfig['credentials'];
export type StreamFilter = ServerConfig['streams'];
export type StreamFamilySwitches = ServerConfig['families'];
export type EventsConfig = NonNullable<ExporterConfig['events']>;
export type DiscoverySource = NonNullable<ExporterConfig['discovery']>[number];
export type ClusterPeersSource = Extract<DiscoverySource, { kind: 'cluster_peers' }>;
export type FileSdSource = Extract<DiscoverySource, { kind: 'file_sd' }>;
export type { CollectorName, StreamFamilyGroup };
export { LOG_LEVELS };
