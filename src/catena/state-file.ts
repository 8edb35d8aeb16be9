/**
 * The state file of one Catena target: the whole Ledger as JSON, written atomically (a temporary
 * file in the same directory, fsync, rename) after each successful poll, read once at start.
 *
 * A file that cannot be read or does not hold a valid ledger is never overwritten: it is renamed
 * aside (`<path>.corrupt-<time>`) so an operator can look at it, and the exporter starts afresh.
 * If even the rename fails, the exporter does not write state at all in this run rather than
 * destroy the file.
 */
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Ledger, PackageTotals, PortalTotals } from './ledger.js';

const FORMAT = 'flussonic-exporter/catena-state';
const VERSION = 1;

interface PackageJson {
  created: number;
  cancelled: number;
  billedSeconds: number;
  billedAmount: Record<string, number>;
  name: string | null;
}
interface PortalJson {
  operations: Record<string, number>;
  unmatched: number;
  lastOperationMs: number | null;
  packages: Record<string, PackageJson>;
}
export interface StateJson {
  format: typeof FORMAT;
  version: typeof VERSION;
  catena: string;
  savedAt: string;
  horizonMs: number;
  position: { ms: number; ids: string[] };
  unknownTypes: string[];
  portals: Record<string, PortalJson>;
  /** [portalId, subscriberId, packageId, creation times (Unix ms)] per open subscription. */
  open: [string, string, string, number[]][];
  lookedUpCreations: string[];
}

export function ledgerToJson(ledger: Ledger, catena: string, savedAtMs: number): StateJson {
  // Object.fromEntries, not obj[id] = ...: an id such as "__proto__" must stay an ordinary key.
  const portals: Record<string, PortalJson> = Object.fromEntries(
    [...ledger.portals].map(([id, p]): [string, PortalJson] => [
      id,
      {
        operations: Object.fromEntries(p.operations),
        unmatched: p.unmatched,
        lastOperationMs: p.lastOperationMs ?? null,
        packages: Object.fromEntries(
          [...p.packages].map(([k, v]): [string, PackageJson] => [
            k,
            { created: v.created, cancelled: v.cancelled, billedSeconds: v.billedSeconds, billedAmount: Object.fromEntries(v.billedAmount), name: v.name ?? null },
          ]),
        ),
      },
    ]),
  );
  const open: StateJson['open'] = [];
  for (const [key, times] of ledger.open) {
    const [portal, subscriber, pkg] = JSON.parse(key) as [string, string, string];
    open.push([portal, subscriber, pkg, times]);
  }
  return {
    format: FORMAT,
    version: VERSION,
    catena,
    savedAt: new Date(savedAtMs).toISOString(),
    horizonMs: ledger.horizonMs,
    position: { ms: ledger.position.ms, ids: [...ledger.position.ids] },
    unknownTypes: [...ledger.unknownTypes],
    portals,
    open,
    lookedUpCreations: [...ledger.lookedUpCreations],
  };
}

/** Thrown by ledgerFromJson with the path of the first offending field. */
export class StateFormatError extends Error {
  override name = 'StateFormatError';
}

/** Rebuilds a ledger from a parsed state file, checking every field. */
export function ledgerFromJson(doc: unknown, catena: string): Ledger {
  const root = obj(doc, '');
  if (root.format !== FORMAT) throw new StateFormatError(`format: expected "${FORMAT}", got ${show(root.format)}`);
  if (root.version !== VERSION) throw new StateFormatError(`version: expected ${VERSION}, got ${show(root.version)}`);
  if (root.catena !== catena) throw new StateFormatError(`catena: the file belongs to ${show(root.catena)}, not "${catena}"`);
  const horizonMs = ms(root.horizonMs, 'horizonMs');
  const pos = obj(root.position, 'position');
  const position = { ms: ms(pos.ms, 'position.ms'), ids: new Set(strings(pos.ids, 'position.ids')) };
  const unknownTypes = new Set(strings(root.unknownTypes, 'unknownTypes'));
  const portals = new Map<string, PortalTotals>();
  for (const [id, raw] of Object.entries(obj(root.portals, 'portals'))) {
    const at = `portals.${id}`;
    const p = obj(raw, at);
    const packages = new Map<string, PackageTotals>();
    for (const [k, rawPkg] of Object.entries(obj(p.packages, `${at}.packages`))) {
      const pat = `${at}.packages.${k}`;
      const v = obj(rawPkg, pat);
      const billedAmount = new Map<string, number>();
      for (const [cur, amount] of Object.entries(obj(v.billedAmount, `${pat}.billedAmount`))) billedAmount.set(cur, total(amount, `${pat}.billedAmount.${cur}`));
      if (v.name !== null && typeof v.name !== 'string') throw new StateFormatError(`${pat}.name: expected a string or null, got ${show(v.name)}`);
      packages.set(k, {
        created: total(v.created, `${pat}.created`),
        cancelled: total(v.cancelled, `${pat}.cancelled`),
        billedSeconds: total(v.billedSeconds, `${pat}.billedSeconds`),
        billedAmount,
        name: v.name ?? undefined,
      });
    }
    const operations = new Map<string, number>();
    for (const [t, n] of Object.entries(obj(p.operations, `${at}.operations`))) operations.set(t, total(n, `${at}.operations.${t}`));
    portals.set(id, {
      operations,
      unmatched: total(p.unmatched, `${at}.unmatched`),
      lastOperationMs: p.lastOperationMs === null ? undefined : ms(p.lastOperationMs, `${at}.lastOperationMs`),
      packages,
    });
  }
  if (!Array.isArray(root.open)) throw new StateFormatError(`open: expected an array, got ${show(root.open)}`);
  const open = new Map<string, number[]>();
  root.open.forEach((entry: unknown, i: number) => {
    const at = `open[${i}]`;
    if (!Array.isArray(entry) || entry.length !== 4) throw new StateFormatError(`${at}: expected [portal, subscriber, package, times]`);
    const [portal, subscriber, pkg, times] = entry as unknown[];
    if (typeof portal !== 'string' || typeof subscriber !== 'string' || typeof pkg !== 'string') throw new StateFormatError(`${at}: ids must be strings`);
    if (!Array.isArray(times)) throw new StateFormatError(`${at}[3]: expected an array of times`);
    const checked = times.map((t: unknown, j: number) => ms(t, `${at}[3][${j}]`)).sort((a, b) => a - b);
    open.set(JSON.stringify([portal, subscriber, pkg]), checked);
  });
  const lookedUpCreations = new Set(strings(root.lookedUpCreations, 'lookedUpCreations'));
  return { horizonMs, position, unknownTypes, portals, open, lookedUpCreations };
}

export type LoadResult =
  | { readonly kind: 'absent' }
  | { readonly kind: 'loaded'; readonly ledger: Ledger }
  /** Unreadable or invalid: set aside under `movedTo`, or left in place when that failed (`moveError`). */
  | { readonly kind: 'set_aside'; readonly reason: string; readonly movedTo?: string; readonly moveError?: string };

/** How far ahead of the clock a saved position may be by default (the catena default max_clock_skew). */
const DEFAULT_MAX_AHEAD_MS = 5 * 60_000;

/**
 * Reads the state file; a bad one is renamed aside, never left to be overwritten. A position (or
 * horizon) more than `maxAheadMs` ahead of `nowMs` is bad too: no counted record can be that far
 * ahead, so the file was written by a clock that was wrong or by hand, and trusting it would skip
 * every operation until then.
 */
export async function loadStateFile(path: string, catena: string, nowMs: number, maxAheadMs = DEFAULT_MAX_AHEAD_MS): Promise<LoadResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    return setAside(path, `unreadable: ${errText(err)}`, nowMs);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return setAside(path, `not valid JSON: ${errText(err).replace(/, ".*$/s, '')}`, nowMs);
  }
  try {
    const ledger = ledgerFromJson(doc, catena);
    const limit = nowMs + maxAheadMs;
    if (ledger.position.ms > limit) return setAside(path, `not a valid state: position.ms ${showTime(ledger.position.ms)} is in the future`, nowMs);
    if (ledger.horizonMs > limit) return setAside(path, `not a valid state: horizonMs ${showTime(ledger.horizonMs)} is in the future`, nowMs);
    return { kind: 'loaded', ledger };
  } catch (err) {
    if (err instanceof StateFormatError) return setAside(path, `not a valid state: ${err.message}`, nowMs);
    throw err;
  }
}

/** Writes the state atomically: readers see the old file or the new one, never half of one. */
export async function saveStateFile(path: string, state: StateJson): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(JSON.stringify(state), 'utf8');
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

async function setAside(path: string, reason: string, nowMs: number): Promise<LoadResult> {
  const stamp = new Date(nowMs).toISOString().replace(/[:.]/g, '-');
  let target = `${path}.corrupt-${stamp}`;
  for (let n = 1; await exists(target); n++) target = `${path}.corrupt-${stamp}-${n}`;
  try {
    await rename(path, target);
    return { kind: 'set_aside', reason, movedTo: target };
  } catch (err) {
    return { kind: 'set_aside', reason, moveError: errText(err) };
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function errText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code} ${e.syscall ?? ''}`.trim() : err instanceof Error ? err.message : String(err);
}

function obj(v: unknown, at: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new StateFormatError(`${at || 'top level'}: expected an object, got ${show(v)}`);
  return v as Record<string, unknown>;
}
function total(v: unknown, at: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new StateFormatError(`${at}: expected a non-negative number, got ${show(v)}`);
  return v;
}
function ms(v: unknown, at: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new StateFormatError(`${at}: expected a time in Unix ms, got ${show(v)}`);
  return v;
}
function strings(v: unknown, at: string): string[] {
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new StateFormatError(`${at}: expected an array of strings`);
  return v as string[];
}
/** ISO 8601 where Date can represent the time, else the number. */
function showTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}
function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
