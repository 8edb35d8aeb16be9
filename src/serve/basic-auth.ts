/**
 * HTTP basic auth against the bcrypt hashes of the web config, with exporter-toolkit's semantics
 * (one 401 for every failure, outcomes cached) and hardened against floods and timing:
 *
 * - bcrypt runs off the serving thread (bcrypt-thread.ts), one comparison at a time, so a scrape
 *   whose credentials are cached is answered while comparisons are under way.
 * - At most MAX_PENDING comparisons wait for their turn, and none is let in whose expected wait
 *   (the comparisons ahead of it times the recent duration of one) is over MAX_WAIT_MS: excess
 *   unauthenticated work is refused at once (`queue_full`, the guards answer 429). One that waits
 *   longer all the same is refused when its time is up (`queue_timeout`). A request is answered or
 *   refused within MAX_WAIT_MS plus one comparison, never left hanging.
 * - Successes and failures are cached apart (least recently used out first): failures, however
 *   many, never push out the credentials of a real scraper. Concurrent checks of the same
 *   credentials share one comparison.
 * - An unknown user is compared with a dummy hash at the highest cost of the configured users, so
 *   a wrong password and an unknown user take the same time.
 *
 * The cache key is a SHA-256 of user, hash and password, so the cache never holds a password in
 * clear; a changed hash (reload) misses it.
 */
import { createHash } from 'node:crypto';
import { BcryptThread, type BcryptRunner } from './bcrypt-thread.js';

/** exporter-toolkit's cache size, for successes; failures have as many entries of their own. */
const CACHE_SIZE = 100;
/** Comparisons waiting for their turn, at most (beyond: 429 at once). */
export const MAX_PENDING = 16;
/** How long a comparison may wait for its turn: half of Prometheus' default scrape timeout. */
export const MAX_WAIT_MS = 5000;

/** Why a check was refused without a comparison: the guards answer 429 and count it. */
export const THROTTLE_REASONS = ['queue_full', 'queue_timeout'] as const;
export type ThrottleReason = (typeof THROTTLE_REASONS)[number];
export type AuthOutcome = 'ok' | 'denied' | ThrottleReason;

/**
 * The salt and checksum of a bcrypt example hash, under any cost: comparing with it costs what a
 * real hash of that cost costs, and no password matches it.
 */
const DUMMY_SALT_AND_CHECKSUM = 'N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
/** exporter-toolkit's cost for its fixed dummy hash; used when no user has a hash (never compared then). */
const DEFAULT_COST = 10;

/**
 * The `WWW-Authenticate` challenge of every 401 that asks for Basic credentials: the web config's
 * (src/serve/guards.ts, exporter-toolkit's challenge) and the event sink's (events-route.ts).
 */
export const BASIC_CHALLENGE = 'Basic';

export interface Credentials {
  readonly user: string;
  readonly password: string;
}

/** The user and password of an `Authorization: Basic` header, or undefined. */
export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The cost of a bcrypt hash (`$2b$12$...` is 12). */
export function bcryptCost(hash: string): number {
  const cost = Number(hash.slice(4, 6));
  return Number.isInteger(cost) ? cost : DEFAULT_COST;
}

const dummies = new WeakMap<ReadonlyMap<string, string>, string>();

/** The hash an unknown user is compared with: a dummy at the highest cost of `users`. */
export function dummyHashFor(users: ReadonlyMap<string, string>): string {
  let dummy = dummies.get(users);
  if (dummy === undefined) {
    let cost = 0;
    for (const hash of users.values()) cost = Math.max(cost, bcryptCost(hash));
    dummy = `$2b$${String(cost || DEFAULT_COST).padStart(2, '0')}$${DUMMY_SALT_AND_CHECKSUM}`;
    dummies.set(users, dummy);
  }
  return dummy;
}

export interface BasicAuthOptions {
  /** What compares (default: a bcrypt thread of its own). */
  readonly runner?: BcryptRunner;
  readonly maxPending?: number;
  readonly maxWaitMs?: number;
}

interface Task {
  readonly password: string;
  readonly hash: string;
  /** `failed`: the comparison could not be made (a malformed hash, a failed thread). */
  readonly resolve: (result: boolean | ThrottleReason | 'failed') => void;
  timer?: NodeJS.Timeout;
}

/** A map kept in order of use, the least recently used first out. */
class Lru {
  private readonly map = new Map<string, true>();
  constructor(private readonly size: number) {}
  has(key: string): boolean {
    if (!this.map.delete(key)) return false;
    this.map.set(key, true);
    return true;
  }
  add(key: string): void {
    this.map.delete(key);
    this.map.set(key, true);
    if (this.map.size > this.size) this.map.delete(this.map.keys().next().value!);
  }
}

export class BasicAuthChecker {
  private readonly successes = new Lru(CACHE_SIZE);
  private readonly failures = new Lru(CACHE_SIZE);
  private readonly inFlight = new Map<string, Promise<AuthOutcome>>();
  private readonly queue: Task[] = [];
  private running = 0;
  private comparisons = 0;
  private readonly byCost = new Map<number, number>();
  /** Recent duration of one comparison (moving average), for the expected wait of a newcomer. */
  private compareMs = 0;
  private readonly runner: BcryptRunner;
  private readonly maxPending: number;
  private readonly maxWaitMs: number;

  constructor(options: BasicAuthOptions = {}) {
    this.runner = options.runner ?? new BcryptThread();
    this.maxPending = options.maxPending ?? MAX_PENDING;
    this.maxWaitMs = options.maxWaitMs ?? MAX_WAIT_MS;
  }

  /** bcrypt comparisons done so far (the cache's misses). */
  get bcryptCount(): number {
    return this.comparisons;
  }

  /** bcrypt comparisons started so far, by the cost of the hash compared with. */
  get comparisonsByCost(): ReadonlyMap<number, number> {
    return this.byCost;
  }

  /** Comparisons waiting for their turn now. */
  get pending(): number {
    return this.queue.length;
  }

  /** Whether the credentials match `users`; a refused check (throttled) is false too. */
  async check(users: ReadonlyMap<string, string>, credentials: Credentials): Promise<boolean> {
    return (await this.verify(users, credentials)) === 'ok';
  }

  /** The outcome of a check: ok, denied (401), or refused without a comparison (429). */
  verify(users: ReadonlyMap<string, string>, credentials: Credentials): Promise<AuthOutcome> {
    const known = users.get(credentials.user);
    const hash = known ?? dummyHashFor(users);
    const key = createHash('sha256').update(credentials.user).update('\0').update(hash).update('\0').update(credentials.password).digest('base64');
    if (known !== undefined && this.successes.has(key)) return Promise.resolve('ok');
    if (this.failures.has(key)) return Promise.resolve('denied');
    const shared = this.inFlight.get(key);
    if (shared) return shared;
    const outcome = this.enqueue(credentials.password, hash).then((result): AuthOutcome => {
      if (result === 'failed') return 'denied'; // not cached: the next request compares again
      if (typeof result === 'string') return result;
      const ok = result && known !== undefined;
      if (ok) this.successes.add(key);
      else this.failures.add(key);
      return ok ? 'ok' : 'denied';
    });
    this.inFlight.set(key, outcome);
    void outcome.finally(() => this.inFlight.delete(key));
    return outcome;
  }

  /** Ends the bcrypt thread (a later check starts a new one). */
  close(): Promise<void> {
    return this.runner.close();
  }

  private enqueue(password: string, hash: string): Promise<boolean | ThrottleReason | 'failed'> {
    const ahead = this.queue.length + this.running;
    if (this.queue.length >= this.maxPending || ahead * this.compareMs > this.maxWaitMs) return Promise.resolve('queue_full');
    return new Promise((resolve) => {
      const task: Task = { password, hash, resolve };
      this.queue.push(task);
      this.pump();
      if (this.queue.includes(task)) {
        task.timer = setTimeout(() => {
          const at = this.queue.indexOf(task);
          if (at < 0) return;
          this.queue.splice(at, 1);
          resolve('queue_timeout');
        }, this.maxWaitMs);
        task.timer.unref();
      }
    });
  }

  /** Starts the next comparison when none runs (one at a time). */
  private pump(): void {
    if (this.running > 0) return;
    const task = this.queue.shift();
    if (!task) return;
    clearTimeout(task.timer);
    this.running += 1;
    this.comparisons += 1;
    const cost = bcryptCost(task.hash);
    this.byCost.set(cost, (this.byCost.get(cost) ?? 0) + 1);
    const started = performance.now();
    this.runner.compare(task.password, task.hash).then(
      (ok) => task.resolve(ok),
      // A malformed hash or a failed thread: a failure, never a success.
      () => task.resolve('failed'),
    ).finally(() => {
      const ms = performance.now() - started;
      this.compareMs = this.compareMs === 0 ? ms : this.compareMs * 0.8 + ms * 0.2;
      this.running -= 1;
      this.pump();
    });
  }
}
