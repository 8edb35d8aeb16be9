/**
 * How many sockets the upstream clients of one thread may have open at once. Each target has its
 * own keep-alive pool (src/upstream/http.ts, up to `max_connections` per server); a fleet of
 * thousands of targets would otherwise hold thousands of sockets (idle ones between polls too)
 * and run out of file descriptors. Every socket takes a slot when it connects and gives it back
 * when it closes; a connect that finds no free slot waits, and meanwhile the pools of targets with
 * no request in flight are asked to close their idle sockets (their next poll connects again).
 * The process-wide total (`max_connections`) is split evenly over the worker threads, each with a
 * budget of its own.
 */
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';
import { guardedLookup, refusedLiteral, type AddressGuard } from './address-guard.js';

/** A pool that can drop its idle sockets when the budget runs short. */
export interface IdlePool {
  /** Whether it has no request in flight and may hold idle sockets. */
  idle(): boolean;
  /** Closes its sockets (none is in use) and starts over with a fresh pool. */
  recycle(): void;
}

export class ConnectionBudget {
  private open = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly pools = new Set<IdlePool>();
  /** The most sockets open at once so far (the figures script reads it). */
  peak = 0;

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.open;
  }

  get waiters(): number {
    return this.waiting.length;
  }

  register(pool: IdlePool): void {
    this.pools.add(pool);
  }

  unregister(pool: IdlePool): void {
    this.pools.delete(pool);
  }

  /** Calls `granted` once a slot is free (now, or when a socket closes). */
  take(granted: () => void): void {
    if (this.open < this.limit) {
      this.open++;
      if (this.open > this.peak) this.peak = this.open;
      granted();
      return;
    }
    this.waiting.push(granted);
    this.reclaim();
  }

  /** A socket closed (or failed to connect): its slot goes to the next waiter. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.open--;
  }

  /** Asks idle pools to close their sockets, about as many pools as there are waiters. */
  reclaim(): void {
    let wanted = this.waiting.length;
    for (const pool of this.pools) {
      if (wanted <= 0) return;
      if (!pool.idle()) continue;
      pool.recycle();
      wanted--;
    }
  }
}

export interface ConnectorOptions {
  readonly timeoutMs: number;
  readonly ca?: string;
  /** Refuse loopback / link-local addresses after resolution (discovered servers). */
  readonly guard?: AddressGuard;
  readonly budget?: ConnectionBudget;
}

type Connector = buildConnector.connector;

/**
 * undici's connector with the address guard (a checking `lookup`, and IP literals checked before
 * connecting) and the budget (a slot per socket, given back when it closes).
 */
export function upstreamConnector(options: ConnectorOptions): Connector {
  const { guard, budget } = options;
  const base = buildConnector({
    timeout: options.timeoutMs,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
    ...(guard !== undefined ? { lookup: guardedLookup(guard) } : {}),
  } as buildConnector.BuildOptions);
  const guarded: Connector = guard === undefined ? base : (opts, callback) => {
    const refused = refusedLiteral(opts.hostname, guard);
    if (refused) return callback(refused, null);
    base(opts, callback);
  };
  if (budget === undefined) return guarded;
  return (opts, callback) => {
    budget.take(() => {
      guarded(opts, (err, socket) => {
        if (err || socket === null) {
          budget.give();
          return callback(err ?? new Error('no socket'), null);
        }
        (socket as Socket).once('close', () => budget.give());
        callback(null, socket);
      });
    });
  };
}
