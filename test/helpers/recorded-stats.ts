import type { ApiStats } from '../../src/flussonic/api.js';

/** ApiStats that keeps what it is told, to assert the accounting. */
export class RecordedStats implements ApiStats {
  readonly requests: string[] = [];
  readonly errors: string[] = [];
  bytes = 0;
  request(endpoint: string, code: string): void {
    this.requests.push(`${endpoint} ${code}`);
  }
  error(endpoint: string, reason: string): void {
    this.errors.push(`${endpoint} ${reason}`);
  }
  responseBytes(_endpoint: string, bytes: number): void {
    this.bytes += bytes;
  }
}
