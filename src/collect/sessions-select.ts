/**
 * What the sessions collector (sessions.ts) asks of GET /sessions: the session field behind each
 * `group_by` label, and the `select` of its walk.
 */
import type { StreamFilter } from '../config/types.js';

/** The session field behind each allowed `group_by` label (`stream` is the session's media `name`). */
export const SESSION_FIELD_OF_LABEL: Readonly<Record<string, string>> = Object.freeze({
  stream: 'name',
  proto: 'proto',
  country: 'country',
  dvr: 'dvr',
  secure: 'secure',
  segments_container: 'segments_container',
  manifest_type: 'manifest_type',
});

/**
 * Grouping fields that can change while a session lives: whether it used DVR, and the manifest it
 * plays (live, archive, timeshift). The others (media name, protocol, country of the IP, TLS,
 * segment container) are fixed when the session opens, so they are read once per session.
 */
export const MUTABLE_FIELDS: ReadonlySet<string> = new Set(['dvr', 'manifest_type']);

/** Fields every poll needs whatever the grouping: identity, counters, lifetime, histogram label. */
const BASE_SELECT = ['id', 'bytes', 'opened_at', 'closed_at', 'proto'] as const;

/**
 * The `select` of the walk: the base fields, the fields behind the grouping labels, and the
 * stream `name` when a stream filter needs it.
 */
export function sessionsSelect(groupBy: readonly string[], filter: StreamFilter = {}): string[] {
  const fields: string[] = [...BASE_SELECT];
  const wanted = groupBy.map(fieldOf);
  if (isFiltering(filter)) wanted.push('name');
  for (const field of wanted) if (!fields.includes(field)) fields.push(field);
  return fields;
}

function isFiltering(filter: StreamFilter): boolean {
  return filter.include !== undefined || filter.exclude !== undefined;
}

/** A stream filter as a key: the collector's groups start again when it changes. */
export function filterId(filter: StreamFilter): string {
  return `${filter.include?.source ?? ''}\u0000${filter.exclude?.source ?? ''}`;
}

/** The session field behind a `group_by` label. */
export function fieldOf(label: string): string {
  const field = SESSION_FIELD_OF_LABEL[label];
  // Config validation admits only the labels above; anything else is a programming error.
  if (field === undefined) throw new Error(`sessions group_by label ${label} has no session field`);
  return field;
}

/** filterId() of no filter. */
export const FILTER_NONE = filterId({});
