/**
 * The Catena operations log (Area B, section 2.10): records per portal, sorted by `createdAt`
 * then `operationId` (compared as strings), with a generator of plausible activity that follows
 * the meaning of each type: a subscriber exists before it subscribes; deleting a subscriber
 * cancels its subscriptions first (same instant); a package is deleted only after every
 * subscription to it was cancelled.
 *
 * Ids are Snowflake-like 64-bit numbers (Unix ms << 22 | sequence), base64 with `+/=` -> `-_.`,
 * as Catena's documentation shows (`aKl9SW3AAAE.`).
 */
import { ApiError, badParameter } from './errors.js';
import type { Rng } from './rng.js';

export const OPERATION_TYPES = [
  'autoCreateSubscriber',
  'createSubscriber',
  'deleteSubscriber',
  'disableSubscriber',
  'enableSubscriber',
  'createPackageSubscriber',
  'deletePackageSubscriber',
  'createPackage',
  'deletePackage',
] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export interface OperationPayload {
  subscriberId?: string;
  name?: string;
  phone?: string;
  packageId?: string;
  packageName?: string;
}

export interface OperationRecord {
  operationId: string;
  type: string;
  portalId: string;
  subscriberId: string | null;
  packageId: string | null;
  createdAt: string;
  updatedAt: string;
  payload: OperationPayload;
}

/** What a test passes to world.catena.add(); absent ids become null, absent times `now`. */
export interface OperationInput {
  type: OperationType | string;
  portalId: string;
  subscriberId?: string | null;
  packageId?: string | null;
  /** Unix ms or an ISO 8601 string. Equal timestamps are allowed (and expected). */
  createdAt?: number | string;
  updatedAt?: number | string;
  payload?: OperationPayload;
  operationId?: string;
}

interface StoredOperation {
  record: OperationRecord;
  createdMs: number;
}

export interface OperationsPage {
  operations: OperationRecord[];
  next: string | null;
  prev: string | null;
  estimated_count: number;
  timing: Record<string, number>;
}

const MAX_LIMIT = 10_000;

/** Snowflake-like id: 42 bits of Unix ms, 22 bits of sequence; base64 with the URL-safe swaps Catena uses. */
export function snowflakeId(unixMs: number, sequence: number): string {
  const value = (BigInt(Math.max(0, Math.floor(unixMs))) << 22n) | BigInt(sequence & 0x3fffff);
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(value & 0xffffffffffffffffn);
  return bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, '.');
}

function toMs(value: number | string, what: string): number {
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) throw new TypeError(`${what}: not a time: ${JSON.stringify(value)}`);
  return ms;
}

function compareStored(a: StoredOperation, b: StoredOperation): number {
  if (a.createdMs !== b.createdMs) return a.createdMs - b.createdMs;
  const x = a.record.operationId;
  const y = b.record.operationId;
  return x < y ? -1 : x > y ? 1 : 0;
}

export class OperationsLog {
  private readonly byPortal = new Map<string, StoredOperation[]>();
  private sequence = 0;

  add(input: OperationInput, now: number): OperationRecord {
    if (typeof input.portalId !== 'string' || input.portalId === '') throw new TypeError('operation: portalId must be a non-empty string');
    if (typeof input.type !== 'string' || input.type === '') throw new TypeError('operation: type must be a non-empty string');
    const createdMs = input.createdAt === undefined ? now : toMs(input.createdAt, 'createdAt');
    const updatedMs = input.updatedAt === undefined ? createdMs : toMs(input.updatedAt, 'updatedAt');
    const record: OperationRecord = {
      operationId: input.operationId ?? snowflakeId(createdMs, this.sequence++),
      type: input.type,
      portalId: input.portalId,
      subscriberId: input.subscriberId ?? null,
      packageId: input.packageId ?? null,
      createdAt: new Date(createdMs).toISOString(),
      updatedAt: new Date(updatedMs).toISOString(),
      payload: { ...(input.payload ?? {}) },
    };
    const stored = { record, createdMs };
    let list = this.byPortal.get(record.portalId);
    if (!list) this.byPortal.set(record.portalId, (list = []));
    // Binary insertion: most additions land at the end, scripted ones may land anywhere.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareStored(list[mid] as StoredOperation, stored) <= 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, stored);
    return record;
  }

  /** Every record of a portal, in log order (copies). */
  list(portalId: string): OperationRecord[] {
    return (this.byPortal.get(portalId) ?? []).map((s) => structuredClone(s.record));
  }

  portals(): string[] {
    return [...this.byPortal.keys()];
  }

  clear(portalId?: string): void {
    if (portalId === undefined) this.byPortal.clear();
    else this.byPortal.delete(portalId);
  }

  /** GET /tv-management/api/v1/operations for one portal. */
  query(portalId: string, params: URLSearchParams): OperationsPage {
    const t0 = performance.now();
    const known = new Set(['type', 'createdAt_gte', 'createdAt_lt', 'subscriberId', 'packageId', 'limit', 'cursor']);
    for (const key of params.keys()) if (!known.has(key)) throw badParameter(key, `unknown parameter ${key}; known: ${[...known].join(', ')}`);

    const types = params.get('type');
    const typeSet = types !== null && types !== '' ? new Set(types.split(',')) : undefined;
    const gte = timeParam(params, 'createdAt_gte');
    const lt = timeParam(params, 'createdAt_lt');
    const subscriberId = params.get('subscriberId');
    const packageId = params.get('packageId');
    let limit = 100;
    const limitRaw = params.get('limit');
    if (limitRaw !== null) {
      if (!/^[0-9]+$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > MAX_LIMIT) throw badParameter('limit', `limit must be an integer from 1 to ${MAX_LIMIT}, got ${JSON.stringify(limitRaw)}`);
      limit = Number(limitRaw);
    }
    const cursorRaw = params.get('cursor');
    const after = cursorRaw !== null && cursorRaw !== '' ? decodeOperationsCursor(cursorRaw) : undefined;

    const all = this.byPortal.get(portalId) ?? [];
    const matching = all.filter((s) => {
      const r = s.record;
      if (typeSet && !typeSet.has(r.type)) return false;
      if (gte !== undefined && s.createdMs < gte) return false;
      if (lt !== undefined && s.createdMs >= lt) return false;
      if (subscriberId !== null && r.subscriberId !== subscriberId) return false;
      if (packageId !== null && r.packageId !== packageId) return false;
      return true;
    });
    let start = 0;
    let end = matching.length;
    if (after) {
      const probe = { createdMs: after.createdMs, record: { operationId: after.operationId } as OperationRecord };
      // First record after the cursor (next) or at/after it (prev: the page ends before it).
      let lo = 0;
      let hi = matching.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const c = compareStored(matching[mid] as StoredOperation, probe);
        if (after.direction === 'next' ? c <= 0 : c < 0) lo = mid + 1;
        else hi = mid;
      }
      if (after.direction === 'next') start = lo;
      else {
        end = lo;
        start = Math.max(0, end - limit);
      }
    }
    end = Math.min(end, start + limit);
    const page = matching.slice(start, end);
    const last = page[page.length - 1];
    const next = last && end < matching.length ? encodeOperationsCursor(last) : null;
    const first = page[0];
    const prev = first && start > 0 ? encodeOperationsCursor(first, 'prev') : null;
    return {
      operations: page.map((s) => s.record),
      next,
      prev,
      estimated_count: matching.length,
      timing: { load: Math.round((performance.now() - t0) * 1000) },
    };
  }
}

function timeParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw === '') return undefined;
  // ISO 8601 date-time (a Z or an offset), or Unix milliseconds.
  const ms = /^[0-9]+$/.test(raw) ? Number(raw) : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(raw) ? Date.parse(raw) : NaN;
  if (!Number.isFinite(ms)) throw badParameter(name, `${name} must be an ISO 8601 date-time with a time zone (2026-01-01T00:00:00Z), got ${JSON.stringify(raw)}`);
  return ms;
}

function encodeOperationsCursor(s: StoredOperation, direction: 'next' | 'prev' = 'next'): string {
  return Buffer.from(JSON.stringify({ c: s.createdMs, o: s.record.operationId, d: direction === 'next' ? 'n' : 'p' })).toString('base64url');
}

function decodeOperationsCursor(raw: string): { createdMs: number; operationId: string; direction: 'next' | 'prev' } {
  const invalid = () => badParameter('cursor', 'cursor is not a value this service issued');
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid();
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { c?: unknown; o?: unknown; d?: unknown };
    if (typeof v.c !== 'number' || typeof v.o !== 'string' || (v.d !== 'n' && v.d !== 'p')) throw invalid();
    return { createdMs: v.c, operationId: v.o, direction: v.d === 'n' ? 'next' : 'prev' };
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw invalid();
  }
}

// ---- activity generator --------------------------------------------------------------------

interface Subscriber {
  id: string;
  name: string;
  phone: string;
  enabled: boolean;
  packages: Set<string>;
}

interface Package {
  id: string;
  name: string;
  free: boolean;
}

interface PortalState {
  portalId: string;
  packages: Map<string, Package>;
  subscribers: Map<string, Subscriber>;
}

const PACKAGE_NAMES = ['Basic', 'Sport', 'Movies', 'Kids', 'Premium', 'News', 'Music', 'Documentary'];
const FIRST_NAMES = ['Anna', 'Boris', 'Chen', 'Dana', 'Emil', 'Fatima', 'Goran', 'Hana', 'Ivan', 'Julia', 'Kofi', 'Lena', 'Mateo', 'Nina', 'Omar', 'Petra'];

/** Operations per hour per portal the generator aims at. */
const OPERATIONS_PER_HOUR = 30;

export class CatenaActivity {
  private readonly portals: PortalState[];
  private idSeq = 0;

  constructor(
    private readonly log: OperationsLog,
    private readonly rng: Rng,
    portalIds: readonly string[],
  ) {
    this.portals = portalIds.map((portalId) => ({ portalId, packages: new Map(), subscribers: new Map() }));
  }

  /** Packages currently known per portal (to configure prices in a demo). */
  packages(portalId: string): { packageId: string; packageName: string }[] {
    const p = this.portals.find((x) => x.portalId === portalId);
    return p ? [...p.packages.values()].map((k) => ({ packageId: k.id, packageName: k.name })) : [];
  }

  /** Seed each portal with packages and subscribers at `from`, then run activity until `to`. */
  history(from: number, to: number): void {
    let seeded = from;
    for (const portal of this.portals) {
      let t = from;
      for (const name of PACKAGE_NAMES.slice(0, 4)) this.createPackage(portal, (t += this.rng.int(1000, 60_000)), name);
      for (let i = 0; i < 12; i++) this.createSubscriber(portal, (t += this.rng.int(10_000, 600_000)));
      seeded = Math.max(seeded, t);
    }
    // Activity starts after every portal's seed, so nothing refers to what does not exist yet.
    this.run(seeded, to);
  }

  /** Generate activity in (from, to): events that take two instants (t, t+1) end before `to`. */
  run(from: number, to: number): void {
    if (to - from < 2) return;
    for (const portal of this.portals) {
      const count = this.rng.poisson((OPERATIONS_PER_HOUR * (to - from)) / 3600_000);
      const times = Array.from({ length: count }, () => from + 1 + Math.floor(this.rng.next() * (to - from - 2))).sort((a, b) => a - b);
      for (const t of times) this.oneEvent(portal, t);
    }
  }

  private newId(t: number): string {
    return snowflakeId(t, 0x200000 | (this.idSeq++ & 0x1fffff));
  }

  private oneEvent(portal: PortalState, t: number): void {
    const subs = [...portal.subscribers.values()];
    const pkgs = [...portal.packages.values()];
    const r = this.rng.weighted([16, 10, 30, 20, 4, 4, 5, 1, 1]);
    switch (r) {
      case 0:
        return void this.createSubscriber(portal, t);
      case 1: {
        // Auto-registration on first SMS login; free packages are connected right away.
        const sub = this.createSubscriber(portal, t, 'autoCreateSubscriber');
        for (const pkg of pkgs) if (pkg.free) this.subscribe(portal, sub, pkg, t + 1);
        return;
      }
      case 2: {
        const sub = subs.length > 0 ? this.rng.pick(subs) : undefined;
        const candidates = sub ? pkgs.filter((p) => !sub.packages.has(p.id)) : [];
        if (sub && candidates.length > 0) this.subscribe(portal, sub, this.rng.pick(candidates), t);
        else this.createSubscriber(portal, t);
        return;
      }
      case 3: {
        const withSubs = subs.filter((s) => s.packages.size > 0);
        if (withSubs.length === 0) return;
        const sub = this.rng.pick(withSubs);
        this.unsubscribe(portal, sub, this.rng.pick([...sub.packages]), t);
        return;
      }
      case 4: {
        const enabled = subs.filter((s) => s.enabled);
        if (enabled.length > 0) this.setEnabled(portal, this.rng.pick(enabled), false, t);
        return;
      }
      case 5: {
        const disabled = subs.filter((s) => !s.enabled);
        if (disabled.length > 0) this.setEnabled(portal, this.rng.pick(disabled), true, t);
        return;
      }
      case 6: {
        if (subs.length <= 5) return;
        const sub = this.rng.pick(subs);
        // Deleting a subscriber cancels all its subscriptions first (together, one instant), then
        // removes it a millisecond later: equal timestamps that a reader must page through.
        for (const pkgId of [...sub.packages]) this.unsubscribe(portal, sub, pkgId, t);
        this.log.add({ type: 'deleteSubscriber', portalId: portal.portalId, subscriberId: sub.id, packageId: null, createdAt: t + 1, payload: { subscriberId: sub.id, name: sub.name } }, t + 1);
        portal.subscribers.delete(sub.id);
        return;
      }
      case 7: {
        const unused = PACKAGE_NAMES.filter((n) => ![...portal.packages.values()].some((p) => p.name === n));
        if (unused.length > 0) this.createPackage(portal, t, this.rng.pick(unused));
        return;
      }
      default: {
        if (pkgs.length <= 2) return;
        const pkg = this.rng.pick(pkgs);
        // A package may be deleted only when nobody is subscribed: cancel those first.
        for (const sub of subs) if (sub.packages.has(pkg.id)) this.unsubscribe(portal, sub, pkg.id, t);
        this.log.add({ type: 'deletePackage', portalId: portal.portalId, subscriberId: null, packageId: pkg.id, createdAt: t + 1, payload: { packageId: pkg.id, packageName: pkg.name } }, t + 1);
        portal.packages.delete(pkg.id);
      }
    }
  }

  private createPackage(portal: PortalState, t: number, name: string): void {
    const pkg: Package = { id: this.newId(t), name, free: name === 'Basic' };
    portal.packages.set(pkg.id, pkg);
    this.log.add({ type: 'createPackage', portalId: portal.portalId, subscriberId: null, packageId: pkg.id, createdAt: t, payload: { packageId: pkg.id, packageName: pkg.name } }, t);
  }

  private createSubscriber(portal: PortalState, t: number, type: 'createSubscriber' | 'autoCreateSubscriber' = 'createSubscriber'): Subscriber {
    const sub: Subscriber = {
      id: this.newId(t),
      name: `${this.rng.pick(FIRST_NAMES)} ${String.fromCharCode(65 + this.rng.int(0, 25))}.`,
      phone: `+1555${String(this.rng.int(0, 9_999_999)).padStart(7, '0')}`,
      enabled: true,
      packages: new Set(),
    };
    portal.subscribers.set(sub.id, sub);
    this.log.add({ type, portalId: portal.portalId, subscriberId: sub.id, packageId: null, createdAt: t, payload: { subscriberId: sub.id, name: sub.name, phone: sub.phone } }, t);
    return sub;
  }

  private subscribe(portal: PortalState, sub: Subscriber, pkg: Package, t: number): void {
    sub.packages.add(pkg.id);
    this.log.add({ type: 'createPackageSubscriber', portalId: portal.portalId, subscriberId: sub.id, packageId: pkg.id, createdAt: t, payload: { subscriberId: sub.id, packageId: pkg.id, packageName: pkg.name } }, t);
  }

  private unsubscribe(portal: PortalState, sub: Subscriber, pkgId: string, t: number): void {
    sub.packages.delete(pkgId);
    const pkg = portal.packages.get(pkgId);
    this.log.add(
      { type: 'deletePackageSubscriber', portalId: portal.portalId, subscriberId: sub.id, packageId: pkgId, createdAt: t, payload: { subscriberId: sub.id, packageId: pkgId, packageName: pkg?.name ?? '' } },
      t,
    );
  }

  private setEnabled(portal: PortalState, sub: Subscriber, enabled: boolean, t: number): void {
    sub.enabled = enabled;
    this.log.add(
      { type: enabled ? 'enableSubscriber' : 'disableSubscriber', portalId: portal.portalId, subscriberId: sub.id, packageId: null, createdAt: t, payload: { subscriberId: sub.id, name: sub.name } },
      t,
    );
  }
}

export function unauthorized(): ApiError {
  return new ApiError(401, [{ code: 'unauthorized', title: 'missing or unknown X-Auth-Token' }]);
}
