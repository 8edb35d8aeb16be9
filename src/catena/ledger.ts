/**
 * The exporter's own accounting of the operations log: counter totals per portal and package, the
 * read position, and what billing needs (the creation times of subscriptions still open). It is
 * everything the state file holds, and nothing more: memory grows with portals, packages and open
 * subscriptions, never with the length of the log.
 *
 * A poll works on a LedgerDraft and commits it only when the whole poll succeeded, so a failed
 * poll (or a failed billing look-up in the middle of it) leaves the totals exactly as they were
 * and the next poll reads the same operations again.
 */
import type { CatenaPrice } from '../config/types.js';
import { CREATE_SUBSCRIPTION, DELETE_SUBSCRIPTION, KNOWN_OPERATION_TYPES, type Operation } from './records.js';

/** At most this many distinct `operation` label values, the known types included; the rest count as `other`. */
export const MAX_OPERATION_TYPES = 50;
export const OTHER_OPERATION = 'other';
const KNOWN_TYPES: ReadonlySet<string> = new Set(KNOWN_OPERATION_TYPES);
const MAX_UNKNOWN_TYPES = MAX_OPERATION_TYPES - KNOWN_OPERATION_TYPES.length;

export interface PackageTotals {
  created: number;
  cancelled: number;
  billedSeconds: number;
  /** Billed amount by currency (a price's currency may change over time). */
  billedAmount: Map<string, number>;
  /** Latest `payload.packageName` seen. */
  name: string | undefined;
}

export interface PortalTotals {
  /** By `operation` label value: a known type, an admitted unknown type, or `other`. */
  operations: Map<string, number>;
  unmatched: number;
  lastOperationMs: number | undefined;
  packages: Map<string, PackageTotals>;
}

/**
 * Where the next poll starts: operations created at `ms` or later, except the ids in `ids`, which
 * were created exactly at `ms` and are already counted (the bound is inclusive because more
 * operations of that same millisecond may appear after a poll, or sit on the next page).
 */
export interface Position {
  readonly ms: number;
  readonly ids: ReadonlySet<string>;
}

export interface Ledger {
  /**
   * The lower bound of the very first poll. Every subscription created at or after it was seen
   * and is in `open` until cancelled; only creations before it are looked up in the log.
   */
  readonly horizonMs: number;
  position: Position;
  /** Unknown operation types given their own label value, in order of arrival (bounded). */
  readonly unknownTypes: Set<string>;
  readonly portals: Map<string, PortalTotals>;
  /** Open subscriptions: subscriptionKey() to creation times, ascending. */
  readonly open: Map<string, number[]>;
  /**
   * Creations from before the horizon already matched by a look-up, so that one creation is never
   * billed twice. Bounded by the number of subscriptions open at the horizon.
   */
  readonly lookedUpCreations: Set<string>;
}

export function emptyLedger(horizonMs: number): Ledger {
  return {
    horizonMs,
    position: { ms: horizonMs, ids: new Set() },
    unknownTypes: new Set(),
    portals: new Map(),
    open: new Map(),
    lookedUpCreations: new Set(),
  };
}

export function subscriptionKey(portalId: string, subscriberId: string, packageId: string): string {
  return JSON.stringify([portalId, subscriberId, packageId]);
}

export function parseSubscriptionKey(key: string): [string, string, string] {
  return JSON.parse(key) as [string, string, string];
}

/** A creation found in the log by a billing look-up. */
export interface FoundCreation {
  readonly operationId: string;
  readonly createdAtMs: number;
}

/** Finds, in the log, the latest creation before the horizon for a subscription (see Ledger.horizonMs). */
export type CreationLookup = (portalId: string, subscriberId: string, packageId: string) => Promise<FoundCreation | undefined>;

/** A cancellation no creation was found for; logged once, after the poll that counted it commits. */
export interface UnmatchedCancellation {
  readonly operationId: string;
  readonly portalId: string;
  readonly reason: string;
}

/** An operation that is counted, but lacks what its type needs (a subscription without a package). */
export interface IncompleteOperation {
  readonly operationId: string;
  readonly reason: string;
}

/**
 * The changes of one poll, on top of a committed ledger. The small parts (totals, types) are
 * copied; open subscriptions are copied per key on first touch, since they can be many.
 */
export class LedgerDraft {
  private readonly portals: Map<string, PortalTotals>;
  private readonly unknownTypes: Set<string>;
  private readonly openTouched = new Map<string, number[]>();
  private readonly lookedUp = new Set<string>();
  private position: Position;
  readonly unmatched: UnmatchedCancellation[] = [];
  readonly incomplete: IncompleteOperation[] = [];
  applied = 0;

  constructor(
    private readonly base: Ledger,
    private readonly prices: ReadonlyMap<string, CatenaPrice>,
  ) {
    this.portals = clonePortals(base.portals);
    this.unknownTypes = new Set(base.unknownTypes);
    this.position = base.position;
  }

  /** Whether an operation of a walk from the current position is new (not counted before). */
  isNew(op: Operation): boolean {
    const p = this.base.position;
    return op.createdAtMs > p.ms || (op.createdAtMs === p.ms && !p.ids.has(op.operationId));
  }

  /**
   * Counts one new operation. Operations must come in compareOperations() order; `lookup` is
   * called for a cancellation whose creation is not among the open subscriptions.
   */
  async apply(op: Operation, lookup: CreationLookup): Promise<void> {
    const portal = this.portal(op.portalId);
    const label = this.operationLabel(op.type);
    portal.operations.set(label, (portal.operations.get(label) ?? 0) + 1);
    if (portal.lastOperationMs === undefined || op.createdAtMs > portal.lastOperationMs) portal.lastOperationMs = op.createdAtMs;
    const pkg = op.packageId === undefined ? undefined : this.package(portal, op.packageId);
    if (pkg && op.packageName !== undefined) pkg.name = op.packageName;
    this.applied++;

    if (op.type === CREATE_SUBSCRIPTION) {
      if (!pkg || op.subscriberId === undefined) {
        this.incomplete.push({ operationId: op.operationId, reason: `${op.type} without ${pkg ? 'subscriberId' : 'packageId'}: not a subscription` });
        return;
      }
      pkg.created++;
      insertSorted(this.openTimes(subscriptionKey(op.portalId, op.subscriberId, op.packageId!)), op.createdAtMs);
    } else if (op.type === DELETE_SUBSCRIPTION) {
      if (!pkg || op.subscriberId === undefined) {
        portal.unmatched++;
        this.unmatched.push({ operationId: op.operationId, portalId: op.portalId, reason: `no ${pkg ? 'subscriberId' : 'packageId'} in the record` });
        return;
      }
      pkg.cancelled++;
      const createdAtMs = await this.matchCreation(op, op.subscriberId, op.packageId!, lookup);
      if (createdAtMs === undefined) {
        portal.unmatched++;
        this.unmatched.push({ operationId: op.operationId, portalId: op.portalId, reason: 'no matching createPackageSubscriber found' });
        return;
      }
      const billedMs = op.createdAtMs - createdAtMs;
      pkg.billedSeconds += billedMs / 1000;
      const price = this.prices.get(op.packageId!);
      if (price) pkg.billedAmount.set(price.currency, (pkg.billedAmount.get(price.currency) ?? 0) + (billedMs * price.amount) / price.perMs);
    }
  }

  /**
   * Moves the position to the newest of the poll's new operations (the ones already counted at
   * the old position are in its ids, so they need not be passed).
   */
  advance(fresh: readonly Operation[]): void {
    let ms = this.base.position.ms;
    for (const op of fresh) if (op.createdAtMs > ms) ms = op.createdAtMs;
    const ids = ms === this.base.position.ms ? new Set(this.base.position.ids) : new Set<string>();
    for (const op of fresh) if (op.createdAtMs === ms) ids.add(op.operationId);
    this.position = { ms, ids };
  }

  /** Writes the draft into the ledger it was made from. */
  commit(): void {
    const b = this.base;
    b.portals.clear();
    for (const [k, v] of this.portals) b.portals.set(k, v);
    for (const t of this.unknownTypes) b.unknownTypes.add(t);
    for (const [key, times] of this.openTouched) {
      if (times.length === 0) b.open.delete(key);
      else b.open.set(key, times);
    }
    for (const id of this.lookedUp) b.lookedUpCreations.add(id);
    b.position = this.position;
  }

  private async matchCreation(op: Operation, subscriberId: string, packageId: string, lookup: CreationLookup): Promise<number | undefined> {
    // The latest creation at or before the cancellation, among the subscriptions seen open.
    const times = this.openTimes(subscriptionKey(op.portalId, subscriberId, packageId));
    for (let i = times.length - 1; i >= 0; i--) {
      if (times[i]! <= op.createdAtMs) return times.splice(i, 1)[0];
    }
    // Not seen: it can only be older than the horizon (everything since was read), so ask the log.
    const found = await lookup(op.portalId, subscriberId, packageId);
    if (!found || found.createdAtMs > op.createdAtMs) return undefined;
    if (this.base.lookedUpCreations.has(found.operationId) || this.lookedUp.has(found.operationId)) return undefined;
    this.lookedUp.add(found.operationId);
    return found.createdAtMs;
  }

  private openTimes(key: string): number[] {
    let times = this.openTouched.get(key);
    if (!times) {
      times = [...(this.base.open.get(key) ?? [])];
      this.openTouched.set(key, times);
    }
    return times;
  }

  private operationLabel(type: string): string {
    if (KNOWN_TYPES.has(type) || this.unknownTypes.has(type)) return type;
    if (this.unknownTypes.size < MAX_UNKNOWN_TYPES) {
      this.unknownTypes.add(type);
      return type;
    }
    return OTHER_OPERATION;
  }

  private portal(portalId: string): PortalTotals {
    let p = this.portals.get(portalId);
    if (!p) {
      p = { operations: new Map(KNOWN_OPERATION_TYPES.map((t) => [t, 0])), unmatched: 0, lastOperationMs: undefined, packages: new Map() };
      this.portals.set(portalId, p);
    }
    return p;
  }

  private package(portal: PortalTotals, packageId: string): PackageTotals {
    let k = portal.packages.get(packageId);
    if (!k) {
      k = { created: 0, cancelled: 0, billedSeconds: 0, billedAmount: new Map(), name: undefined };
      portal.packages.set(packageId, k);
    }
    return k;
  }
}

function insertSorted(times: number[], t: number): void {
  let i = times.length;
  while (i > 0 && times[i - 1]! > t) i--;
  times.splice(i, 0, t);
}

function clonePortals(portals: ReadonlyMap<string, PortalTotals>): Map<string, PortalTotals> {
  const out = new Map<string, PortalTotals>();
  for (const [id, p] of portals) {
    const packages = new Map<string, PackageTotals>();
    for (const [k, v] of p.packages) packages.set(k, { ...v, billedAmount: new Map(v.billedAmount) });
    out.set(id, { operations: new Map(p.operations), unmatched: p.unmatched, lastOperationMs: p.lastOperationMs, packages });
  }
  return out;
}
