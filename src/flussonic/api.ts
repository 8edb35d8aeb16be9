/**
 * What collectors need from an upstream client. The Flussonic client (src/flussonic/client.ts)
 * implements it for API v3; collectors depend only on this interface.
 */

/** A JSON object as it arrived: every field must be checked before use. */
export type JsonObject = Readonly<Record<string, unknown>>;

export interface WalkOptions {
  /** Fields to ask for (`select=`): exactly the ones the collector maps. Dotted for nested ones. */
  readonly select: readonly string[];
  /** Field that identifies an item, for de-duplication across pages (`name`, `id`). */
  readonly key: string;
  /**
   * Whether the walk drops items seen on an earlier page (default true). A caller that keys every
   * item by `key` itself (the sessions collector tracks each id) turns it off and saves a set of
   * every key per walk; the walk then yields pages whole and ends with `cursor_loop` on an empty
   * page while `next` is set instead of on a page with nothing new.
   */
  readonly dedupe?: boolean;
  /** Extra filter parameters (`field=value`, `field_gte=...`). */
  readonly filter?: Readonly<Record<string, string>>;
  /** Sort fields (`sort=`), when the walk needs a particular order. */
  readonly sort?: readonly string[];
}

export interface FlussonicApi {
  /**
   * GET one JSON document. `endpoint` is the path template used in metrics and errors
   * (`/config/stats`); `path` the concrete path below the API prefix.
   */
  getJson(endpoint: string, path: string, signal: AbortSignal, query?: Readonly<Record<string, string>>): Promise<JsonObject>;

  /**
   * Cursor walk of a collection (`/streams`, `/sessions`, `/dvrs`): `limit=<page_size>`, `select=`,
   * then `cursor=<next>` until `next` is null. Yields each page's new items (duplicates of items
   * seen on earlier pages dropped). Throws an UpstreamError (reason `cursor_loop`) on a repeated
   * cursor, a page that adds nothing new, or the page cap.
   */
  walk(collection: string, options: WalkOptions, signal: AbortSignal): AsyncGenerator<JsonObject[], void, undefined>;
}

/** Receives the per-request accounting that feeds the exporter's self-metrics. */
export interface ApiStats {
  request(endpoint: string, code: string): void;
  error(endpoint: string, reason: string): void;
  responseBytes(endpoint: string, bytes: number): void;
  /** A connection refused by the address guard of a discovered server (src/upstream/address-guard.ts). */
  refused?(range: string): void;
}
