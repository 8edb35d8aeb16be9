/**
 * A bounded log of the requests the simulator received, for tests that assert what the exporter
 * asked for (`select`, `limit`, how many pages). Credentials are never stored.
 */

export interface RequestRecord {
  readonly method: string;
  /** Full path as received, without the query (`/streamer/api/v3/sessions`). */
  readonly path: string;
  /** Path below the API prefix (`/sessions`), or the Catena path (`/operations`). */
  readonly apiPath: string;
  readonly query: Readonly<Record<string, string>>;
  /** Request headers except Authorization, X-Auth-Token and Cookie. */
  readonly headers: Readonly<Record<string, string>>;
  /** Simulated time of arrival (Unix ms). */
  readonly time: number;
}

const SECRET_HEADERS = new Set(['authorization', 'x-auth-token', 'cookie', 'proxy-authorization']);

export class RequestLog {
  private records: RequestRecord[] = [];

  constructor(private readonly capacity = 10_000) {}

  add(record: Omit<RequestRecord, 'headers'> & { headers: Readonly<Record<string, string | string[] | undefined>> }): void {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(record.headers)) {
      if (v === undefined || SECRET_HEADERS.has(k.toLowerCase())) continue;
      headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    }
    this.records.push({ ...record, headers });
    if (this.records.length > this.capacity) this.records.splice(0, this.records.length - this.capacity);
  }

  /** Every record kept (oldest first). */
  entries(): readonly RequestRecord[] {
    return [...this.records];
  }

  /** Requests whose full path or API path starts with `prefix` (all when omitted). */
  count(prefix?: string): number {
    if (prefix === undefined) return this.records.length;
    return this.records.filter((r) => r.path.startsWith(prefix) || r.apiPath.startsWith(prefix)).length;
  }

  last(): RequestRecord | undefined {
    return this.records[this.records.length - 1];
  }

  clear(): void {
    this.records = [];
  }
}
