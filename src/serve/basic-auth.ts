/**
 * HTTP basic auth against the bcrypt hashes of the web config, with exporter-toolkit's
 * semantics: an unknown user is checked against a fixed hash (no user enumeration by timing),
 * one bcrypt comparison runs at a time (a flood cannot occupy every CPU), and outcomes are cached
 * so a scrape every 15 s does not pay bcrypt each time. The cache key is a SHA-256 of user, hash
 * and password, so the cache never holds a password in clear; a changed hash (reload) misses it.
 */
import { createHash, randomInt } from 'node:crypto';
import bcrypt from 'bcryptjs';

/** exporter-toolkit's bcrypt hash of "fakepassword" (cost 10), compared for unknown users. */
const FAKE_HASH = '$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi';
/** exporter-toolkit's cache size; a tenth is evicted at random when it is full. */
const CACHE_SIZE = 100;

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

export class BasicAuthChecker {
  private readonly cache = new Map<string, boolean>();
  /** The tail of the queue of bcrypt comparisons: they run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private comparisons = 0;

  /** bcrypt comparisons done so far (the cache's misses). */
  get bcryptCount(): number {
    return this.comparisons;
  }

  /** Whether the credentials match `users`; an unknown user costs the same as a wrong password. */
  async check(users: ReadonlyMap<string, string>, credentials: Credentials): Promise<boolean> {
    const known = users.get(credentials.user);
    const hash = known ?? FAKE_HASH;
    const key = createHash('sha256').update(credentials.user).update('\0').update(hash).update('\0').update(credentials.password).digest('base64');
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached && known !== undefined;
    const run = this.queue.then(() => {
      this.comparisons += 1;
      return bcrypt.compare(credentials.password, hash);
    });
    this.queue = run.catch(() => undefined);
    let ok: boolean;
    try {
      ok = (await run) && known !== undefined;
    } catch {
      ok = false;
    }
    this.remember(key, ok);
    return ok;
  }

  private remember(key: string, ok: boolean): void {
    if (this.cache.size >= CACHE_SIZE) {
      // Random eviction of a tenth at once, as exporter-toolkit: cheap and not skewed.
      const keys = [...this.cache.keys()];
      for (let i = 0; i < Math.max(1, Math.floor(keys.length / 10)); i += 1) {
        const victim = keys.splice(randomInt(keys.length), 1)[0]!;
        this.cache.delete(victim);
      }
    }
    this.cache.set(key, ok);
  }
}
