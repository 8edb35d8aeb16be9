/**
 * Every failure the exporter reports is one of these. Each says where it happened (the target and
 * a path or endpoint), what was expected and what arrived, and never carries a credential: error
 * texts are built from config names, endpoint templates and upstream status, never from URLs with
 * userinfo, headers or secret values.
 */

/** Reasons that feed flussonic_exporter_api_errors_total{reason}. */
export type ApiErrorReason = 'timeout' | 'connection' | 'http' | 'invalid_json' | 'too_large' | 'cursor_loop' | 'auth' | 'shape';

export class ExporterError extends Error {
  override name = 'ExporterError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** One problem in the configuration, with the path of the offending key (`servers[1].url`). */
export interface ConfigProblem {
  readonly path: string;
  readonly message: string;
  /** Line in the YAML file, where the problem has one. */
  readonly line?: number;
}

export class ConfigError extends ExporterError {
  override name = 'ConfigError';
  constructor(
    readonly source: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(`${source}: ${problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ')}`);
  }
}

/** A failed request or walk against an upstream API (Flussonic or Catena). */
export class UpstreamError extends ExporterError {
  override name = 'UpstreamError';
  constructor(
    readonly reason: ApiErrorReason,
    /** Configured name of the target (`edge-1`). */
    readonly target: string,
    /** API path template (`/streams`, `/config/stats`, `/operations`). */
    readonly endpoint: string,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(`${target} ${endpoint}: ${message}`, options);
    this.status = options?.status;
  }
  readonly status: number | undefined;
}

export class UpstreamHttpError extends UpstreamError {
  override name = 'UpstreamHttpError';
}
export class UpstreamTimeoutError extends UpstreamError {
  override name = 'UpstreamTimeoutError';
}
export class UpstreamShapeError extends UpstreamError {
  override name = 'UpstreamShapeError';
}

/** No usable connection: refused, reset, DNS failure, closed mid-response. */
export class UpstreamConnectionError extends UpstreamError {
  override name = 'UpstreamConnectionError';
}
/** The upstream refused the credentials (401/403). */
export class UpstreamAuthError extends UpstreamHttpError {
  override name = 'UpstreamAuthError';
}
/** The response body grew past the configured cap; it was cut off, not buffered. */
export class UpstreamBodyTooLargeError extends UpstreamError {
  override name = 'UpstreamBodyTooLargeError';
}
/** The response body is not JSON, or is truncated JSON. */
export class UpstreamInvalidJsonError extends UpstreamError {
  override name = 'UpstreamInvalidJsonError';
}
/** A cursor walk that does not advance: repeated cursor, a page with nothing new, the page cap. */
export class CursorLoopError extends UpstreamError {
  override name = 'CursorLoopError';
}
