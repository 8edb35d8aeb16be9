/**
 * The collection query language of section 4.3, over plain JSON objects: filters (`field=a,b`,
 * `_ne _lt _lte _gt _gte _is=null _is_not=null _like`, dotted fields, AND), `sort` with implicit
 * keys, `limit`, an opaque `cursor` holding the sort values of the last item (applied as an extra
 * filter on the next request), `select` with dotted fields, `estimated_count` and `timing`.
 *
 * Speed matters (100,000 sessions): a collection is kept sorted by its default order, so a request
 * with the default order needs no sort, and the cursor position is found by binary search.
 */
import { badParameter } from './errors.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonRecord = { [key: string]: Json };

export type FilterOp = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'is' | 'is_not' | 'like';

export interface Filter {
  readonly param: string;
  readonly path: readonly string[];
  readonly op: FilterOp;
  /** Comma-separated values of `eq`/`ne` split; one value for the others. */
  readonly values: readonly string[];
}

export interface SortKey {
  readonly field: string;
  readonly path: readonly string[];
  readonly desc: boolean;
}

export interface CollectionSpec {
  /** Key of the items array in the response (`streams`, `sessions`). */
  readonly name: string;
  /** Appended to every sort unless already listed (section 4.3); the last one must be unique. */
  readonly implicitSort: readonly string[];
  /** Fields whose values sort in a fixed order instead of alphabetically (`named_by`). */
  readonly rank?: Readonly<Record<string, readonly string[]>>;
  readonly defaultLimit: number;
}

export interface ParsedQuery {
  readonly filters: readonly Filter[];
  readonly sort: readonly SortKey[];
  /** The sort as a canonical string, stored in cursors. */
  readonly sortSpec: string;
  readonly limit: number;
  readonly cursor?: Cursor;
  readonly select?: SelectTree;
}

interface Cursor {
  readonly values: readonly Json[];
  readonly direction: 'next' | 'prev';
}

/** `select` as a tree: `true` = take the whole value, else the listed members. */
export type SelectTree = Map<string, SelectTree | true>;

export interface QueryPage {
  readonly items: unknown[];
  readonly estimated_count: number;
  readonly next: string | null;
  readonly prev: string | null;
  readonly timing: Record<string, number>;
}

const OPERATOR_SUFFIXES: readonly [string, FilterOp][] = [
  ['_is_not', 'is_not'],
  ['_like', 'like'],
  ['_lte', 'lte'],
  ['_gte', 'gte'],
  ['_lt', 'lt'],
  ['_gt', 'gt'],
  ['_ne', 'ne'],
  ['_is', 'is'],
];

/** Parameters that are not filters. `q` is Flussonic's free-text search (name, title). */
const RESERVED = new Set(['sort', 'limit', 'cursor', 'select', 'q']);
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

/** The query parameters a collection read accepts, for /schema (the parser below implements them). */
export const COLLECTION_PARAMETERS = [
  { name: 'select', schema: { type: 'string' }, description: 'Comma-separated fields to return; nested fields with dots.' },
  { name: 'sort', schema: { type: 'string' }, description: 'Comma-separated sort fields; `-` before a field sorts descending. Implicit keys are appended.' },
  { name: 'limit', schema: { type: 'integer', minimum: 1 }, description: 'Maximum number of items (default 100).' },
  { name: 'cursor', schema: { type: 'string' }, description: 'Opaque value of `next` or `prev` of a previous response.' },
  { name: 'q', schema: { type: 'string' }, description: 'Substring searched in `name` and `title`.' },
] as const;

export function parseQuery(params: URLSearchParams, spec: CollectionSpec): ParsedQuery & { q?: string } {
  const filters: Filter[] = [];
  for (const [key, value] of params) {
    if (RESERVED.has(key)) continue;
    filters.push(parseFilter(key, value));
  }

  const limitRaw = params.get('limit');
  let limit = spec.defaultLimit;
  if (limitRaw !== null) {
    if (!/^[0-9]+$/.test(limitRaw)) throw badParameter('limit', `limit must be a positive integer, got ${JSON.stringify(limitRaw)}`);
    limit = Number(limitRaw);
    if (limit < 1 || !Number.isSafeInteger(limit)) throw badParameter('limit', `limit must be a positive integer, got ${limitRaw}`);
  }

  const sortRaw = params.get('sort');
  const cursorRaw = params.get('cursor');
  let cursor: (Cursor & { sortSpec: string }) | undefined;
  if (cursorRaw !== null && cursorRaw !== '') cursor = decodeCursor(cursorRaw);

  let sort: SortKey[];
  let sortSpec: string;
  if (sortRaw !== null && sortRaw !== '') {
    sort = withImplicitKeys(parseSort(sortRaw), spec);
    sortSpec = sortToSpec(sort);
    if (cursor && cursor.sortSpec !== sortSpec) {
      throw badParameter('cursor', 'cursor was made for another sort order; repeat the sort of the request that returned it');
    }
  } else if (cursor) {
    // A cursor carries its sort, so `?cursor=...` alone continues the walk it came from.
    sort = withImplicitKeys(parseSort(cursor.sortSpec, 'cursor'), spec);
    sortSpec = cursor.sortSpec;
  } else {
    sort = withImplicitKeys([], spec);
    sortSpec = sortToSpec(sort);
  }
  if (cursor && cursor.values.length !== sort.length) throw badParameter('cursor', 'cursor does not match the sort keys');

  const selectRaw = params.get('select');
  const select = selectRaw !== null && selectRaw !== '' ? parseSelect(selectRaw) : undefined;
  const q = params.get('q') ?? undefined;
  return { filters, sort, sortSpec, limit, ...(cursor ? { cursor } : {}), ...(select ? { select } : {}), ...(q ? { q } : {}) };
}

function parseFilter(key: string, value: string): Filter {
  let field = key;
  let op: FilterOp = 'eq';
  for (const [suffix, suffixOp] of OPERATOR_SUFFIXES) {
    if (key.endsWith(suffix) && key.length > suffix.length) {
      field = key.slice(0, -suffix.length);
      op = suffixOp;
      break;
    }
  }
  if (!FIELD.test(field)) throw badParameter(key, `not a field name: ${JSON.stringify(field)}`);
  if ((op === 'is' || op === 'is_not') && value !== 'null') {
    throw badParameter(key, `${key} accepts only the value null, got ${JSON.stringify(value)}`);
  }
  const values = op === 'eq' || op === 'ne' ? value.split(',') : [value];
  return { param: key, path: field.split('.'), op, values };
}

function parseSort(raw: string, parameter = 'sort'): SortKey[] {
  const keys: SortKey[] = [];
  for (const part of raw.split(',')) {
    const desc = part.startsWith('-');
    const field = desc ? part.slice(1) : part;
    if (!FIELD.test(field)) throw badParameter(parameter, `not a sort field: ${JSON.stringify(part)}`);
    if (keys.some((k) => k.field === field)) throw badParameter(parameter, `sort field listed twice: ${field}`);
    keys.push({ field, path: field.split('.'), desc });
  }
  return keys;
}

function withImplicitKeys(keys: SortKey[], spec: CollectionSpec): SortKey[] {
  const out = [...keys];
  for (const field of spec.implicitSort) {
    if (!out.some((k) => k.field === field)) out.push({ field, path: field.split('.'), desc: false });
  }
  return out;
}

function sortToSpec(keys: readonly SortKey[]): string {
  return keys.map((k) => (k.desc ? '-' : '') + k.field).join(',');
}

export function parseSelect(raw: string): SelectTree {
  const tree: SelectTree = new Map();
  for (const field of raw.split(',')) {
    if (field === '') continue;
    if (!FIELD.test(field)) throw badParameter('select', `not a field name: ${JSON.stringify(field)}`);
    let node = tree;
    const parts = field.split('.');
    parts.forEach((part, i) => {
      const existing = node.get(part);
      if (existing === true) return; // a parent is already selected whole
      if (i === parts.length - 1) {
        node.set(part, true);
        return;
      }
      if (existing === undefined) {
        const child: SelectTree = new Map();
        node.set(part, child);
        node = child;
      } else {
        node = existing;
      }
    });
  }
  return tree;
}

// ---- cursors -------------------------------------------------------------------------------

/** base64url of JSON; opaque to clients, as section 4.3 demands. */
function encodeCursor(values: readonly Json[], sortSpec: string, direction: 'next' | 'prev'): string {
  return Buffer.from(JSON.stringify({ s: sortSpec, v: values, d: direction === 'next' ? 'n' : 'p' })).toString('base64url');
}

function decodeCursor(raw: string): Cursor & { sortSpec: string } {
  const invalid = () => badParameter('cursor', 'cursor is not a value this server issued');
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(raw)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (typeof parsed !== 'object' || parsed === null) throw invalid();
  const { s, v, d } = parsed as Record<string, unknown>;
  if (typeof s !== 'string' || !Array.isArray(v) || (d !== 'n' && d !== 'p')) throw invalid();
  return { sortSpec: s, values: v as Json[], direction: d === 'n' ? 'next' : 'prev' };
}

// ---- values --------------------------------------------------------------------------------

export function getPath(item: unknown, path: readonly string[]): unknown {
  let value: unknown = item;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function typeOrder(v: unknown): number {
  if (v === null || v === undefined) return 0;
  switch (typeof v) {
    case 'boolean':
      return 1;
    case 'number':
      return 2;
    case 'string':
      return 3;
    default:
      return 4;
  }
}

/** Total order over JSON values: null < booleans < numbers < strings < objects. */
export function compareValues(a: unknown, b: unknown, rank?: readonly string[]): number {
  if (rank && typeof a === 'string' && typeof b === 'string') {
    const ra = rank.indexOf(a);
    const rb = rank.indexOf(b);
    const ia = ra < 0 ? rank.length : ra;
    const ib = rb < 0 ? rank.length : rb;
    if (ia !== ib) return ia - ib;
  }
  const ta = typeOrder(a);
  const tb = typeOrder(b);
  if (ta !== tb) return ta - tb;
  switch (ta) {
    case 0:
      return 0;
    case 1:
      return Number(a) - Number(b);
    case 2:
      return (a as number) - (b as number);
    case 3:
      return a === b ? 0 : (a as string) < (b as string) ? -1 : 1;
    default: {
      const ja = JSON.stringify(a);
      const jb = JSON.stringify(b);
      return ja === jb ? 0 : ja < jb ? -1 : 1;
    }
  }
}

function sortValues(item: unknown, sort: readonly SortKey[]): Json[] {
  return sort.map((k) => {
    const v = getPath(item, k.path);
    return v === undefined ? null : (v as Json);
  });
}

function compareTuples(a: readonly unknown[], b: readonly unknown[], sort: readonly SortKey[], spec: CollectionSpec): number {
  for (let i = 0; i < sort.length; i++) {
    const key = sort[i] as SortKey;
    const c = compareValues(a[i], b[i], spec.rank?.[key.field]);
    if (c !== 0) return key.desc ? -c : c;
  }
  return 0;
}

/** Comparator of whole items by a sort; the collection stores keep themselves in this order. */
export function itemComparator(sort: readonly SortKey[], spec: CollectionSpec): (a: unknown, b: unknown) => number {
  return (a, b) => {
    for (const key of sort) {
      const c = compareValues(getPath(a, key.path), getPath(b, key.path), spec.rank?.[key.field]);
      if (c !== 0) return key.desc ? -c : c;
    }
    return 0;
  };
}

export function defaultSort(spec: CollectionSpec): SortKey[] {
  return withImplicitKeys([], spec);
}

function matchesOne(value: unknown, filter: Filter): boolean {
  if (Array.isArray(value)) return value.some((v) => matchesOne(v, filter));
  switch (filter.op) {
    case 'is':
      return value === null || value === undefined;
    case 'is_not':
      return value !== null && value !== undefined;
    case 'eq':
      return filter.values.some((raw) => equalsRaw(value, raw));
    case 'ne':
      return !filter.values.some((raw) => equalsRaw(value, raw));
    case 'like':
      return typeof value === 'string' && value.includes(filter.values[0] as string);
    default: {
      const raw = filter.values[0] as string;
      let c: number;
      if (typeof value === 'number') {
        if (raw.trim() === '' || !Number.isFinite(Number(raw))) return false;
        c = value - Number(raw);
      } else if (typeof value === 'string') {
        c = value === raw ? 0 : value < raw ? -1 : 1;
      } else {
        return false;
      }
      return filter.op === 'lt' ? c < 0 : filter.op === 'lte' ? c <= 0 : filter.op === 'gt' ? c > 0 : c >= 0;
    }
  }
}

function equalsRaw(value: unknown, raw: string): boolean {
  switch (typeof value) {
    case 'string':
      return value === raw;
    case 'number':
      return raw.trim() !== '' && Number(raw) === value;
    case 'boolean':
      return String(value) === raw;
    default:
      return value === null && raw === 'null';
  }
}

function matches(item: unknown, filters: readonly Filter[], q: string | undefined): boolean {
  for (const f of filters) {
    if (!matchesOne(getPath(item, f.path), f)) return false;
  }
  if (q !== undefined) {
    const name = getPath(item, ['name']);
    const title = getPath(item, ['title']);
    if (!(typeof name === 'string' && name.includes(q)) && !(typeof title === 'string' && title.includes(q))) return false;
  }
  return true;
}

// ---- projection ----------------------------------------------------------------------------

export function project(value: unknown, tree: SelectTree): unknown {
  if (Array.isArray(value)) return value.map((v) => project(v, tree));
  if (value === null || typeof value !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of tree) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (sub === true) out[key] = v;
    else {
      const p = project(v, sub);
      if (p !== undefined) out[key] = p;
    }
  }
  return out;
}

// ---- the query -----------------------------------------------------------------------------

/**
 * Filtered and sorted collections of one unchanged world state, so that the pages of a walk with
 * a filter or a non-default sort do not filter and sort 100,000 items again. The caller empties
 * it whenever the collection may have changed.
 */
export interface QueryCache {
  get(key: string): readonly unknown[] | undefined;
  set(key: string, ordered: readonly unknown[]): void;
}

/** True when a query needs nothing but the default sort keys of the items (no filter, default order). */
export function needsOnlySortKeys(query: ParsedQuery & { q?: string }, defaultSortSpec: string): boolean {
  return query.filters.length === 0 && query.q === undefined && query.sortSpec === defaultSortSpec;
}

/**
 * Run a parsed query over `items`. `presortedBy` is the sort spec the array is already in (its
 * default order); a request with that order skips the sort. `materialize` turns the items of the
 * page into the objects to return: a collection whose documents are costly to build can pass
 * light items holding only the sort keys (see needsOnlySortKeys) and build just one page.
 */
export function runQuery(
  items: readonly unknown[],
  query: ParsedQuery & { q?: string },
  spec: CollectionSpec,
  presortedBy?: string,
  cache?: QueryCache,
  materialize?: (page: unknown[]) => unknown[],
): QueryPage {
  const t0 = performance.now();
  const unfiltered = query.filters.length === 0 && query.q === undefined;
  const presorted = presortedBy === query.sortSpec;
  const cacheKey = cache && !(unfiltered && presorted) ? JSON.stringify([query.filters.map((f) => [f.param, f.values]), query.q ?? null, query.sortSpec]) : undefined;
  const cached = cacheKey !== undefined ? cache!.get(cacheKey) : undefined;

  const filtered = cached ?? (unfiltered ? items : items.filter((item) => matches(item, query.filters, query.q)));
  const t1 = performance.now();

  let ordered: readonly unknown[] = filtered;
  if (!presorted && !cached) {
    // Decorate once: reading dotted paths inside the comparator would cost n log n lookups.
    const decorated = filtered.map((item) => ({ item, key: sortValues(item, query.sort) }));
    decorated.sort((a, b) => compareTuples(a.key, b.key, query.sort, spec));
    ordered = decorated.map((d) => d.item);
  }
  if (cacheKey !== undefined && !cached) cache!.set(cacheKey, ordered);
  const t2 = performance.now();

  let start = 0;
  let end = ordered.length;
  if (query.cursor) {
    const cursorValues = query.cursor.values;
    // First index whose tuple is > cursor (next) or >= cursor (prev page ends before it).
    const bound = lowerBound(ordered, (item) => compareTuples(sortValues(item, query.sort), cursorValues, query.sort, spec) > (query.cursor!.direction === 'next' ? 0 : -1));
    if (query.cursor.direction === 'next') start = bound;
    else {
      end = bound;
      start = Math.max(0, end - query.limit);
    }
  }
  end = Math.min(end, start + query.limit);
  const page = ordered.slice(start, end);
  const t3 = performance.now();

  const first = page[0];
  const last = page[page.length - 1];
  const next = end < ordered.length ? encodeCursor(last !== undefined ? sortValues(last, query.sort) : (query.cursor?.values ?? []), query.sortSpec, 'next') : null;
  const prev = start > 0 ? encodeCursor(first !== undefined ? sortValues(first, query.sort) : (query.cursor?.values ?? []), query.sortSpec, 'prev') : null;
  const full = materialize ? materialize(page) : page;
  const selected = query.select ? full.map((item) => project(item, query.select!)) : full;
  const t4 = performance.now();

  const us = (ms: number) => Math.round(ms * 1000);
  return {
    items: selected,
    estimated_count: filtered.length,
    next,
    prev,
    timing: { filter: us(t1 - t0), sort: us(t2 - t1), limit: us(t3 - t2), select: us(t4 - t3), load: us(t4 - t0) },
  };
}

/** Smallest index where `pred` turns true (pred must be monotonic over the array). */
function lowerBound(items: readonly unknown[], pred: (item: unknown) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(items[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
