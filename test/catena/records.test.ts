import { describe, expect, it } from 'vitest';
import { compareOperations, parseOperation, type Operation } from '../../src/catena/records.js';

const record = {
  operationId: 'aKl9SW3AAAE.',
  type: 'createPackageSubscriber',
  portalId: 'p1',
  subscriberId: 's1',
  packageId: 'k1',
  createdAt: '2026-01-01T00:00:01.250Z',
  updatedAt: '2026-01-01T00:00:01.250Z',
  payload: { subscriberId: 's1', packageId: 'k1', packageName: 'Basic' },
};

describe('operation records', () => {
  it('keeps the fields the exporter maps, createdAt in Unix ms', () => {
    expect(parseOperation(record)).toEqual({
      ok: true,
      op: { operationId: 'aKl9SW3AAAE.', type: 'createPackageSubscriber', portalId: 'p1', subscriberId: 's1', packageId: 'k1', createdAtMs: Date.UTC(2026, 0, 1, 0, 0, 1, 250), packageName: 'Basic' },
    });
  });

  it('takes subscriberId and packageId from the payload when the top-level ones are null', () => {
    const r = parseOperation({ ...record, subscriberId: null, packageId: null });
    expect(r.ok && [r.op.subscriberId, r.op.packageId]).toEqual(['s1', 'k1']);
    const bare = parseOperation({ ...record, subscriberId: null, packageId: null, payload: {} });
    expect(bare.ok && [bare.op.subscriberId, bare.op.packageId, bare.op.packageName]).toEqual([undefined, undefined, undefined]);
  });

  it('rejects a record that counting cannot use, saying which field and what came', () => {
    expect(parseOperation([])).toEqual({ ok: false, reason: 'expected an object, got an array' });
    expect(parseOperation({ ...record, operationId: 7 })).toEqual({ ok: false, reason: 'operationId: expected a non-empty string, got number' });
    expect(parseOperation({ ...record, type: '' })).toEqual({ ok: false, operationId: 'aKl9SW3AAAE.', reason: 'type: expected a non-empty string, got ""' });
    expect(parseOperation({ ...record, portalId: null })).toEqual({ ok: false, operationId: 'aKl9SW3AAAE.', reason: 'portalId: expected a non-empty string, got null' });
    expect(parseOperation({ ...record, createdAt: 1767225600000 })).toEqual({ ok: false, operationId: 'aKl9SW3AAAE.', reason: 'createdAt: expected an ISO 8601 string, got number' });
    expect(parseOperation({ ...record, createdAt: 'soon' })).toEqual({ ok: false, operationId: 'aKl9SW3AAAE.', reason: 'createdAt: expected an ISO 8601 timestamp, got "soon"' });
  });

  it('orders by time, then creations before cancellations within a millisecond, then by id', () => {
    const op = (id: string, type: string, ms: number): Operation => ({ operationId: id, type, portalId: 'p', subscriberId: 's', packageId: 'k', createdAtMs: ms, packageName: undefined });
    const sorted = [op('a', 'deletePackageSubscriber', 5), op('b', 'createSubscriber', 5), op('c', 'createPackageSubscriber', 5), op('d', 'createSubscriber', 4), op('a0', 'createSubscriber', 5)].sort(compareOperations);
    expect(sorted.map((o) => o.operationId)).toEqual(['d', 'c', 'a0', 'b', 'a']);
  });
});
