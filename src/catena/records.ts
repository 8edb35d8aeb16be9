/**
 * Operation records (api-description 2.10) as the exporter keeps them: only the fields it maps,
 * checked one by one. The service publishes no schema, so a record that lacks what counting needs
 * (an id, a type, a portal, a parsable createdAt) is rejected with the reason, never guessed at.
 */
import { parseIsoMs } from './time.js';

export const CREATE_SUBSCRIPTION = 'createPackageSubscriber';
export const DELETE_SUBSCRIPTION = 'deletePackageSubscriber';

/** Operation types named by the service's documentation: exported from 0 for every known portal. */
export const KNOWN_OPERATION_TYPES = [
  'autoCreateSubscriber',
  'createSubscriber',
  'deleteSubscriber',
  'disableSubscriber',
  'enableSubscriber',
  CREATE_SUBSCRIPTION,
  DELETE_SUBSCRIPTION,
  'createPackage',
  'deletePackage',
] as const;

export interface Operation {
  readonly operationId: string;
  readonly type: string;
  readonly portalId: string;
  /** Top-level `subscriberId`, else `payload.subscriberId`; undefined when neither is a string. */
  readonly subscriberId: string | undefined;
  /** Top-level `packageId`, else `payload.packageId`. */
  readonly packageId: string | undefined;
  /** `createdAt` in Unix ms (floor of finer digits). */
  readonly createdAtMs: number;
  /** `payload.packageName`, the only source of package names. */
  readonly packageName: string | undefined;
}

export type ParsedRecord = { readonly ok: true; readonly op: Operation } | { readonly ok: false; readonly reason: string; readonly operationId?: string };

/** Checks one element of `operations[]`. */
export function parseOperation(raw: unknown): ParsedRecord {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: `expected an object, got ${describe(raw)}` };
  const r = raw as Record<string, unknown>;
  const operationId = r.operationId;
  if (typeof operationId !== 'string' || operationId === '') return { ok: false, reason: `operationId: expected a non-empty string, got ${describe(operationId)}` };
  const fail = (reason: string): ParsedRecord => ({ ok: false, reason, operationId });
  if (typeof r.type !== 'string' || r.type === '') return fail(`type: expected a non-empty string, got ${describe(r.type)}`);
  if (typeof r.portalId !== 'string' || r.portalId === '') return fail(`portalId: expected a non-empty string, got ${describe(r.portalId)}`);
  if (typeof r.createdAt !== 'string') return fail(`createdAt: expected an ISO 8601 string, got ${describe(r.createdAt)}`);
  const createdAtMs = parseIsoMs(r.createdAt);
  if (createdAtMs === undefined) return fail(`createdAt: expected an ISO 8601 timestamp, got ${describe(r.createdAt)}`);
  const payload = typeof r.payload === 'object' && r.payload !== null && !Array.isArray(r.payload) ? (r.payload as Record<string, unknown>) : {};
  return {
    ok: true,
    op: {
      operationId,
      type: r.type,
      portalId: r.portalId,
      subscriberId: nonEmptyString(r.subscriberId) ?? nonEmptyString(payload.subscriberId),
      packageId: nonEmptyString(r.packageId) ?? nonEmptyString(payload.packageId),
      createdAtMs,
      packageName: nonEmptyString(payload.packageName),
    },
  };
}

/**
 * The order in which a poll applies operations: by time; within one millisecond creations of
 * subscriptions before cancellations (so a subscription opened and closed in the same
 * millisecond matches), then by id for a stable order.
 */
export function compareOperations(a: Operation, b: Operation): number {
  if (a.createdAtMs !== b.createdAtMs) return a.createdAtMs - b.createdAtMs;
  const ra = a.type === CREATE_SUBSCRIPTION ? 0 : a.type === DELETE_SUBSCRIPTION ? 2 : 1;
  const rb = b.type === CREATE_SUBSCRIPTION ? 0 : b.type === DELETE_SUBSCRIPTION ? 2 : 1;
  if (ra !== rb) return ra - rb;
  return a.operationId < b.operationId ? -1 : a.operationId > b.operationId ? 1 : 0;
}

function nonEmptyString(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return typeof v;
}
