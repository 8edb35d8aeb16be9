/**
 * A worker's request accounting per target: the ApiStats sink its clients write to, drained into
 * every poll result as counts since the last one (the main thread keeps the running totals).
 */
import type { ApiStats } from '../flussonic/api.js';
import type { ApiCounts } from './protocol.js';

class TargetCounts implements ApiStats {
  private requests = new Map<string, number>();
  private errors = new Map<string, number>();
  private bytes = new Map<string, number>();
  private refusedByRange = new Map<string, number>();

  request(endpoint: string, code: string): void {
    bump(this.requests, `${endpoint}\u0000${code}`, 1);
  }

  error(endpoint: string, reason: string): void {
    bump(this.errors, `${endpoint}\u0000${reason}`, 1);
  }

  responseBytes(endpoint: string, bytes: number): void {
    bump(this.bytes, endpoint, bytes);
  }

  refused(range: string): void {
    bump(this.refusedByRange, range, 1);
  }

  drain(): ApiCounts {
    const pairs = (m: Map<string, number>) => [...m].map(([k, n]) => [...(k.split('\u0000') as [string, string]), n] as const);
    const out: ApiCounts = { requests: pairs(this.requests), errors: pairs(this.errors), bytes: [...this.bytes], ...(this.refusedByRange.size > 0 ? { refused: [...this.refusedByRange] } : {}) };
    this.refusedByRange = new Map();
    this.requests = new Map();
    this.errors = new Map();
    this.bytes = new Map();
    return out;
  }
}

function bump(map: Map<string, number>, key: string, n: number): void {
  map.set(key, (map.get(key) ?? 0) + n);
}

export class ApiCountsByTarget {
  private readonly targets = new Map<string, TargetCounts>();

  /** The sink of one target's clients (a Catena service may share a server's name: one sink, as before). */
  stats(target: string): ApiStats {
    let counts = this.targets.get(target);
    if (!counts) this.targets.set(target, (counts = new TargetCounts()));
    return counts;
  }

  /** Forgets the targets not in `names` (removed ones): their leftover counts must not reach a later target of the same name. */
  retain(names: ReadonlySet<string>): void {
    for (const name of this.targets.keys()) if (!names.has(name)) this.targets.delete(name);
  }

  drain(target: string): ApiCounts {
    return this.targets.get(target)?.drain() ?? { requests: [], errors: [], bytes: [] };
  }
}
