/**
 * Which event kinds the receiver knows and what it checks of each: a compact, hand-written table
 * of the 23.05 OpenAPI (`streamer_event1`, the per-kind schemas it refs), kept to the fields the
 * receiver reads. The published `oneOf` cannot tell kinds apart by itself, so an event is checked
 * against the row of its own `event` name. A test compares this table with the OpenAPI file.
 *
 * Every field is optional and nullable in the schemas; a field present with the wrong type, or a
 * number outside its valid range, makes the event rejected (counted, reason `shape`), a missing
 * one is simply not used. Each number whose value reaches a series (a session's timestamps and
 * duration, the event id the dedup window keeps) has its range beside its type, so no series can
 * become negative, infinite or absurd.
 */

import { SESSION_SECONDS_RANGE, SESSION_UTC_MS_RANGE } from '../families/ranges.js';

export type FieldType = 'string' | 'integer' | 'number' | 'object';

/** A number with the valid range of its `format` (both ends included). */
export interface RangedField {
  readonly type: 'integer' | 'number';
  /** The schema's `format` (none for event_id). */
  readonly format?: string;
  readonly min: number;
  readonly max: number;
}

export type Field = FieldType | RangedField;

/** Unix time in milliseconds (`utc_ms`) of a session: the range the polled sessions check too (ranges.ts). */
export const SESSION_UTC_MS: RangedField = Object.freeze({ type: 'number', format: 'utc_ms', ...SESSION_UTC_MS_RANGE });
/** Whole seconds a session lasted: the range the polled sessions check too (ranges.ts). */
export const SESSION_SECONDS: RangedField = Object.freeze({ type: 'integer', format: 'seconds', ...SESSION_SECONDS_RANGE });
/** An event id the dedup window can hold exactly. */
const EVENT_ID: RangedField = Object.freeze({ type: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER });

/** The fields every event may carry (the schemas' `event_default`); `utc_ms` is read of run starts only (dedup.ts). */
export const COMMON_FIELDS: Readonly<Record<string, Field>> = Object.freeze({ event_id: EVENT_ID, utc_ms: 'integer' });

/** The fields read of the kinds the receiver counts beyond `flussonic_events_total`. */
export const COUNTED_KINDS: Readonly<Record<string, Readonly<Record<string, Field>>>> = Object.freeze({
  source_closed: { media: 'string', url: 'string', reason: 'object' },
  push_blocked: { media: 'string', url: 'string' },
  stream_closed: { media: 'string', reason: 'string' },
  play_closed: { media: 'string', id: 'string', proto: 'string', opened_at: SESSION_UTC_MS, closed_at: SESSION_UTC_MS, duration: SESSION_SECONDS },
  transcoder_device_insufficient_resources: { deviceid: 'integer', reason: 'string' },
  server_started: { instance_id: 'string' },
  change_server_id: { old: 'string', instance_id: 'string' },
});

/** Every kind of the 23.05 OpenAPI, in its order: the values of flussonic_events_total{event}. */
export const EVENT_KINDS: readonly string[] = Object.freeze([
  'server_starting', 'server_started', 'change_server_id', 'presence_connected', 'presence_disconnected',
  'config_external_error', 'config_external_success', 'source_opened', 'source_connected', 'source_started',
  'source_updated', 'source_closed', 'stream_opened', 'stream_updated', 'stream_closed', 'play_opened',
  'play_started', 'play_updated', 'play_closed', 'push_opened', 'push_connected', 'push_started', 'push_updated',
  'push_closed', 'push_blocked', 'push_restored', 'chassis_connected', 'chassis_disconnected',
  'transcoder_device_insufficient_resources', 'webrtc_play_prober_timeout', 'webrtc_play_prober_wrong_interval',
  'ad_injected', 'multiplexer_pid_on', 'multiplexer_pid_off', 'motion_started', 'motion_stopped',
]);

/** The `event` label of a kind the table does not list. */
export const OTHER_KIND = 'other';

/** The kinds the sink's `only` filter should list (docs/events.md). */
export const SINK_ONLY: readonly string[] = Object.freeze(['server_started', 'change_server_id', 'source_closed', 'stream_closed', 'play_closed', 'push_blocked', 'transcoder_device_insufficient_resources']);

/** The values of the `proto` label: the schemas' `protocol` enum; another value is `other`. */
export const PROTOCOLS: ReadonlySet<string> = new Set([
  'copy', 'fake', 'rtmp', 'rtmps', 'rtmpe', 'rtsp', 'rtsp-udp', 'rtsp2', 'rtsps', 'est', 'srt', 'mseld', 'shoutcast',
  'shoutcasts', 'webrtc', 'hls', 'hlss', 'hls2', 'hlss2', 'llhls', 'cmaf', 'dash', 'mss', 'm4s', 'm4ss', 'm4f', 'm4fs',
  'tshttp', 'tshttps', 'tstcp', 'tsssl', 'flv', 'annexb', 'udp', 'udp1', 'udp2', 'udp3', 'mpts-udp', 'mpts-http',
  'mpts-https', 'mpts-dvb', 'dvb', 'decklink', 'aja', 'dektec', 'dektec-asi', 'v4l', 'v4l2', 'playlist', 'mixer',
  'mosaic', 'mosaic2', 'timeshift', 'file', 'download', 'mbr', 'mp4', 'logo', 'jpeg', 'mjpeg', 'h323', 'ad_injector',
  'ffmpeg', 'transponder', 'api', 'json_manifest', 'player',
]);

/** Whether `value` (present, not null) has the type the table names. */
export function hasType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'object':
      return typeof value === 'object' && !Array.isArray(value);
  }
}

/** Whether `value` (present, not null) has the field's type and, for a ranged one, is in its range. */
function fits(value: unknown, field: Field): boolean {
  if (typeof field === 'string') return hasType(value, field);
  return hasType(value, field.type) && (value as number) >= field.min && (value as number) <= field.max;
}

/** The first field of `event` present with a type or value other than its kind's row allows, or undefined. */
export function shapeProblem(event: Readonly<Record<string, unknown>>, fields: Readonly<Record<string, Field>> | undefined): string | undefined {
  for (const name in COMMON_FIELDS) {
    const v = event[name];
    if (v != null && !fits(v, COMMON_FIELDS[name]!)) return name;
  }
  if (!fields) return undefined;
  for (const name in fields) {
    const v = event[name];
    if (v != null && !fits(v, fields[name]!)) return name;
  }
  return undefined;
}
