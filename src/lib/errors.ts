/**
 * Every failure the exporter reports is an ExporterError of one kind in ERROR_KINDS, a table in
 * the manner of fastify's error codes: a row per kind says the reason label it counts under in
 * flussonic_exporter_api_errors_total{reason} (none for config problems), what was expected and
 * how the message reads. The error carries the kind, where it happened (the target and the
 * endpoint or path), `cause`, what was expected and the details of what arrived, and never a
 * credential: details are config names, endpoint templates, upstream status, sizes and redacted
 * texts, never URLs with userinfo, headers or secret values.
 */

/** Reasons that feed flussonic_exporter_api_errors_total{reason}. */
export type ApiErrorReason = 'timeout' | 'connection' | 'http' | 'invalid_json' | 'too_large' | 'cursor_loop' | 'auth' | 'shape';

/** One problem in the configuration, with the path of the offending key (`servers[1].url`). */
export interface ConfigProblem {
  readonly path: string;
  readonly message: string;
  /** Line in the YAML file, where the problem has one. */
  readonly line?: number;
}

interface KindRow<Details> {
  readonly reason: ApiErrorReason | undefined;
  readonly expected: string;
  readonly message: (details: Details) => string;
}

type Page = { readonly page: number; readonly key: string };

/**
 * Every kind of failure: its reason label, what was expected, its message. The order of the rows
 * gives the order of the reasons in API_ERROR_REASONS (the order of the exported series).
 */
export const ERROR_KINDS = {
  response_timeout: { reason: 'timeout', expected: 'a complete response in time', message: (d: { readonly ms: number }) => `no complete response within ${d.ms} ms` },
  request_aborted: { reason: 'timeout', expected: 'a complete response', message: (d: { readonly why: string }) => `request aborted: ${d.why}` },
  collector_deadline: { reason: 'timeout', expected: 'the collector to finish', message: (d: { readonly why: string }) => `collector did not finish: ${d.why}` },
  connection_failed: {
    reason: 'connection',
    expected: 'a complete response',
    message: (d: { readonly what: string; readonly causeText: string }) => `${d.what}: ${d.causeText}`,
  },
  address_refused: {
    reason: 'connection',
    expected: 'an address a discovered server may be polled at',
    message: (d: { readonly address: string; readonly why: string }) => `connection refused before connecting: ${d.why}`,
  },
  http_status: { reason: 'http', expected: 'HTTP 2xx', message: (d: { readonly status: number }) => `HTTP ${d.status}, expected 2xx` },
  empty_body: { reason: 'invalid_json', expected: 'a JSON object', message: (_d: Readonly<Record<never, never>>) => 'empty body, expected a JSON object' },
  invalid_json: {
    reason: 'invalid_json',
    expected: 'a JSON object',
    message: (d: { readonly got: 'truncated JSON' | 'not valid JSON'; readonly bytes: number }) => `response body is ${d.got} (${d.bytes} bytes)`,
  },
  body_too_large: {
    reason: 'too_large',
    expected: 'a body within the cap',
    message: (d: { readonly cap: number; readonly got: string }) => `response body over the cap of ${d.cap} bytes (${d.got}); cut off`,
  },
  cursor_no_progress: {
    reason: 'cursor_loop',
    expected: 'new items on every page',
    message: (d: Page & { readonly got: 'no new items' | 'no items' }) => `page ${d.page} added ${d.got} while "${d.key}" is still set (no progress)`,
  },
  cursor_repeated: {
    reason: 'cursor_loop',
    expected: 'a new cursor on every page',
    message: (d: { readonly page: number }) => `page ${d.page} returned a cursor already followed in this walk (repeated cursor)`,
  },
  cursor_page_cap: {
    reason: 'cursor_loop',
    expected: 'a walk within the page cap',
    message: (d: { readonly cap: number; readonly key: string }) => `page cap of ${d.cap} pages reached with "${d.key}" still set (walk does not end)`,
  },
  auth_refused: {
    reason: 'auth',
    expected: 'the credentials accepted',
    message: (d: { readonly status: number; readonly hint: string }) => `HTTP ${d.status}: credentials refused (check ${d.hint})`,
  },
  not_an_object: { reason: 'shape', expected: 'a JSON object', message: (d: { readonly got: string }) => `expected a JSON object, got ${d.got}` },
  page_items_not_array: {
    reason: 'shape',
    expected: 'an array of items',
    message: (d: Page & { readonly got: string }) => `page ${d.page}: expected an array under "${d.key}", got ${d.got}`,
  },
  page_next_not_string: {
    reason: 'shape',
    expected: 'a string or null cursor',
    message: (d: Page & { readonly got: string }) => `page ${d.page}: expected "${d.key}" to be a string or null, got ${d.got}`,
  },
  page_item_not_object: {
    reason: 'shape',
    expected: 'an object per item',
    message: (d: Page & { readonly index: number; readonly got: string }) => `page ${d.page}: item ${d.index} of "${d.key}" is ${d.got}, expected an object`,
  },
  config_invalid: {
    reason: undefined,
    expected: 'a valid configuration',
    message: (d: { readonly source: string; readonly problems: readonly ConfigProblem[] }) => d.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; '),
  },
} as const satisfies Record<string, KindRow<never>>;

export type ErrorKind = keyof typeof ERROR_KINDS;

/** Every reason label, in the order of the table's rows: the series exported at 0 from the start. */
export const API_ERROR_REASONS: readonly ApiErrorReason[] = [
  ...new Set(Object.values(ERROR_KINDS).flatMap((row: KindRow<never>) => (row.reason === undefined ? [] : [row.reason]))),
];
export type DetailsOf<K extends ErrorKind> = Parameters<(typeof ERROR_KINDS)[K]['message']>[0];
export type ReasonOf<K extends ErrorKind> = (typeof ERROR_KINDS)[K]['reason'];
/** The kinds counted in flussonic_exporter_api_errors_total: failures of an upstream API (Flussonic or Catena). */
export type UpstreamKind = { [K in ErrorKind]: ReasonOf<K> extends ApiErrorReason ? K : never }[ErrorKind];

/** Where a failure happened: the configured target (`edge-1`) or config source, and the API path template (`/streams`). */
export interface ErrorPlace {
  readonly target: string;
  readonly endpoint?: string;
}

export class ExporterError<K extends ErrorKind = ErrorKind> extends Error {
  override name = 'ExporterError';
  readonly kind: K;
  readonly reason: ReasonOf<K>;
  readonly target: string;
  readonly endpoint: string | undefined;
  readonly expected: string;
  /** What arrived, as the message says it. */
  readonly details: DetailsOf<K>;
  /** The upstream's HTTP status, for the kinds that have one. */
  readonly status: number | undefined;

  constructor(kind: K, place: ErrorPlace, details: DetailsOf<K>, options?: { cause?: unknown }) {
    const row: KindRow<never> = ERROR_KINDS[kind];
    const message = row.message as (details: DetailsOf<K>) => string;
    super(`${place.target}${place.endpoint !== undefined ? ` ${place.endpoint}` : ''}: ${message(details)}`, options);
    this.kind = kind;
    this.reason = row.reason as ReasonOf<K>;
    this.target = place.target;
    this.endpoint = place.endpoint;
    this.expected = row.expected;
    this.details = details;
    const status = (details as { readonly status?: unknown } | undefined)?.status;
    this.status = typeof status === 'number' ? status : undefined;
  }
}

/** A failed request or walk against an upstream API (Flussonic or Catena). */
export type UpstreamError = ExporterError<UpstreamKind> & { readonly reason: ApiErrorReason };

/** A configuration with problems: `source` names the file (or `demo config`), `problems` lists each with its path. */
export type ConfigError = ExporterError<'config_invalid'> & DetailsOf<'config_invalid'>;

export function isErrorKind<K extends ErrorKind>(error: unknown, ...kinds: readonly K[]): error is ExporterError<K> {
  return error instanceof ExporterError && (kinds as readonly ErrorKind[]).includes(error.kind);
}

export function upstreamError<K extends UpstreamKind>(kind: K, place: Required<ErrorPlace>, details: DetailsOf<K>, options?: { cause?: unknown }): UpstreamError {
  return new ExporterError(kind, place, details, options) as UpstreamError;
}

export function isUpstreamError(error: unknown): error is UpstreamError {
  return error instanceof ExporterError && error.reason !== undefined;
}

export function configError(source: string, problems: readonly ConfigProblem[]): ConfigError {
  return Object.assign(new ExporterError('config_invalid', { target: source }, { source, problems }), { source, problems });
}

export function isConfigError(error: unknown): error is ConfigError {
  return isErrorKind(error, 'config_invalid');
}
