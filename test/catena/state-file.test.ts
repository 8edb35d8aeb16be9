import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emptyLedger, LedgerDraft } from '../../src/catena/ledger.js';
import type { Operation } from '../../src/catena/records.js';
import { ledgerToJson, loadStateFile, saveStateFile } from '../../src/catena/state-file.js';

const T0 = Date.UTC(2026, 0, 1);
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'catena-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function op(id: string, type: string, atMs: number, fields: Partial<Operation> = {}): Operation {
  return { operationId: id, type, portalId: 'p1', subscriberId: 's1', packageId: 'k1', createdAtMs: atMs, packageName: undefined, ...fields };
}

async function sampleLedger() {
  const l = emptyLedger(T0);
  const d = new LedgerDraft(l, new Map([['k1', { amount: 1, perMs: 1000, currency: 'EUR' }]]));
  const ops = [
    op('a', 'createPackageSubscriber', T0 + 1000, { packageName: 'Basic' }),
    op('b', 'deletePackageSubscriber', T0 + 4000),
    op('c', 'createPackageSubscriber', T0 + 5000, { portalId: '__proto__', subscriberId: 's2', packageId: 'constructor' }),
    op('d', 'brandNewType', T0 + 5000),
  ];
  for (const o of ops) await d.apply(o, async () => undefined);
  d.advance(ops);
  d.commit();
  return l;
}

describe('state file', () => {
  it('round-trips the whole ledger, odd ids included', async () => {
    const path = join(dir, 'sub', 'main.json');
    const ledger = await sampleLedger();
    await saveStateFile(path, ledgerToJson(ledger, 'main', T0 + 6000));
    const loaded = await loadStateFile(path, 'main', T0 + 7000);
    expect(loaded.kind).toBe('loaded');
    if (loaded.kind !== 'loaded') return;
    expect(ledgerToJson(loaded.ledger, 'main', T0 + 6000)).toEqual(ledgerToJson(ledger, 'main', T0 + 6000));
    expect(loaded.ledger.portals.get('__proto__')!.packages.get('constructor')!.created).toBe(1);
    expect(loaded.ledger.portals.get('p1')!.packages.get('k1')!.billedAmount.get('EUR')).toBe(3);
    expect([...loaded.ledger.position.ids].sort()).toEqual(['c', 'd']);
    expect(await readdir(join(dir, 'sub'))).toEqual(['main.json']);
  });

  it('reports a missing file as absent', async () => {
    expect(await loadStateFile(join(dir, 'none.json'), 'main', T0)).toEqual({ kind: 'absent' });
  });

  it('sets a file that is not JSON aside, keeping its content', async () => {
    const path = join(dir, 'main.json');
    await writeFile(path, '{"format": "flussonic-exporter/catena-state", trunc');
    const r = await loadStateFile(path, 'main', T0);
    expect(r.kind).toBe('set_aside');
    if (r.kind !== 'set_aside') return;
    expect(r.reason).toMatch(/^not valid JSON/);
    expect(r.movedTo).toBe(`${path}.corrupt-2026-01-01T00-00-00-000Z`);
    expect(await readFile(r.movedTo!, 'utf8')).toBe('{"format": "flussonic-exporter/catena-state", trunc');
    expect(await readdir(dir)).toEqual(['main.json.corrupt-2026-01-01T00-00-00-000Z']);
  });

  it('sets aside a file with a wrong field, naming the field', async () => {
    const path = join(dir, 'main.json');
    const json = ledgerToJson(await sampleLedger(), 'main', T0);
    (json.portals.p1!.packages.k1 as { created: unknown }).created = -1;
    await writeFile(path, JSON.stringify(json));
    const r = await loadStateFile(path, 'main', T0);
    expect(r).toMatchObject({ kind: 'set_aside', reason: 'not a valid state: portals.p1.packages.k1.created: expected a non-negative number, got -1' });
  });

  it('sets aside the state of another catena', async () => {
    const path = join(dir, 'main.json');
    await saveStateFile(path, ledgerToJson(await sampleLedger(), 'other', T0));
    const r = await loadStateFile(path, 'main', T0);
    expect(r).toMatchObject({ kind: 'set_aside', reason: 'not a valid state: catena: the file belongs to "other", not "main"' });
  });

  it('never reuses the name of an earlier set-aside file', async () => {
    const path = join(dir, 'main.json');
    await writeFile(path, 'garbage 1');
    await loadStateFile(path, 'main', T0);
    await writeFile(path, 'garbage 2');
    const r = await loadStateFile(path, 'main', T0);
    expect(r).toMatchObject({ kind: 'set_aside', movedTo: `${path}.corrupt-2026-01-01T00-00-00-000Z-1` });
    expect((await readdir(dir)).sort()).toEqual(['main.json.corrupt-2026-01-01T00-00-00-000Z', 'main.json.corrupt-2026-01-01T00-00-00-000Z-1']);
  });

  it('sets aside a path that cannot be read as a file', async () => {
    const path = join(dir, 'main.json');
    await mkdir(path);
    const r = await loadStateFile(path, 'main', T0);
    expect(r).toMatchObject({ kind: 'set_aside', reason: 'unreadable: EISDIR read' });
  });
});
