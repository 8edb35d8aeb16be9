/**
 * What the simulator accepts, as JSON Schema: the stream configuration a PUT/POST carries (fields
 * and limits from the 23.05 OpenAPI and sections 2.6-2.8, 8 of the description). The same objects
 * validate request bodies (validateBody) and make up GET /schema (openApiDocument), so the
 * published description cannot drift from what is enforced.
 */
import { COLLECTION_PARAMETERS, type Json, type JsonRecord } from './query.js';
import { jsonPointer, type ApiErrorObject } from './errors.js';
import { OPERATION_TYPES } from './catena.js';

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

export interface Schema {
  readonly type?: JsonType | readonly JsonType[];
  readonly enum?: readonly Json[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  /** A schema: a map with those values. Absent: unknown members are ignored (dropped). */
  readonly additionalProperties?: Schema;
  readonly maxProperties?: number;
  readonly items?: Schema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly anyOf?: readonly Schema[];
  /** Set by the server; ignored in requests. */
  readonly readOnly?: boolean;
  readonly description?: string;
}

const int = (minimum?: number, maximum?: number, description?: string): Schema => ({ type: 'integer', ...(minimum !== undefined ? { minimum } : {}), ...(maximum !== undefined ? { maximum } : {}), ...(description ? { description } : {}) });
const str = (extra: Partial<Schema> = {}): Schema => ({ type: 'string', ...extra });
const bool: Schema = { type: 'boolean' };
const strMap = (maxProperties?: number, valueLength?: [number, number]): Schema => ({
  type: 'object',
  additionalProperties: valueLength ? { type: 'string', minLength: valueLength[0], maxLength: valueLength[1] } : { type: 'string' },
  ...(maxProperties !== undefined ? { maxProperties } : {}),
});
const oneOfValues = (values: readonly Json[], description?: string): Schema => ({ enum: values, ...(description ? { description } : {}) });

const URL_PATTERN = '^[a-z][a-z0-9+.-]*://';

const inputSchema: Schema = {
  type: 'object',
  required: ['url'],
  properties: {
    url: str({ pattern: URL_PATTERN, minLength: 4, description: 'Source URL (udp://, hls://, rtsp://, publish://, ...).' }),
    comment: str(),
    priority: int(0),
    source_timeout: { anyOf: [int(0), { enum: [false] }] },
    timeout: int(0),
    frames_timeout: int(0),
    max_retry_timeout: int(1),
    user_agent: str(),
    cluster_key: str(),
    via: str(),
    max_bitrate: int(0),
    remote_dvr: oneOfValues(['nochain', 'chain', 'none']),
    output_audio: oneOfValues(['keep', 'aac', 'add_aac']),
    headers: strMap(),
    allow_if: str(),
    deny_if: str(),
    no_clients_reconnect_delay: int(0),
    stats: { type: 'object', readOnly: true },
  },
};

const pushSchema: Schema = {
  type: 'object',
  required: ['url'],
  properties: {
    url: str({ pattern: URL_PATTERN, minLength: 4 }),
    comment: str(),
    disabled: bool,
    retry_limit: int(0),
    retry_timeout: int(0),
    timeout: int(0),
    connect_timeout: int(0),
    bitrate: int(0),
    vb: int(0),
    pnr: int(1, 65535),
    standby: bool,
    stats: { type: 'object', readOnly: true },
  },
};

const videoTrackSchema: Schema = {
  type: 'object',
  required: ['track'],
  properties: {
    track: int(1, undefined, 'Output track number (required, as in the 23.05 `tc_video_opts`).'),
    codec: oneOfValues(['h264', 'hevc', 'av1', 'mp2v']),
    bitrate: { anyOf: [int(1), { enum: ['copy'] }], description: 'kbit/s, or `copy`.' },
    preset: oneOfValues(['slow', 'medium', 'fast', 'veryfast', 'ultrafast']),
    profile: oneOfValues(['simple', 'baseline', 'main', 'main10', 'high', 'high10', 'high422', 'high444']),
    level: oneOfValues(['1', '1b', '1.1', '1.2', '1.3', '2', '2.1', '2.2', '3', '3.0', '3.1', '3.2', '4', '4.0', '4.1', '4.2', '5', '5.1', '5.2', '6', '6.1', '6.2', 'low', 'main', 'high', 'high1440']),
    fps: { anyOf: [oneOfValues(['auto', 'any', 'ntsc25', 'ntsc30', 'ntsc60']), int(1)] },
    bframes: int(0, 4),
    refs: int(1, 6),
    gop: int(1),
    threads: int(1),
    open_gop: bool,
    rc_method: str(),
    temporal_tradeoff: oneOfValues([15, 13, 12, 23, 0]),
    vbv_bufsize: int(0),
    resize_mode: oneOfValues(['vic', 'cuda']),
    title: str(),
    pid: int(0, 8191),
    extra: strMap(),
  },
};

const audioTrackSchema: Schema = {
  type: 'object',
  properties: {
    codec: oneOfValues(['aac', 'mp3', 'mp2a', 'opus', 'ac3', 'eac3', 'pcma', 'pcmu', 'pcm_s24be', 'pcm_s24le']),
    bitrate: { anyOf: [int(1), { enum: ['copy'] }] },
    language: str(),
    input_track: int(0),
    volume: str({ pattern: '^([0-9]+(\\.[0-9]+)?|[-+]?[0-9]+(\\.[0-9]+)?dB)$' }),
    split_channels: bool,
    sample_rate: oneOfValues([96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 0]),
    channels: int(1, 7),
  },
};

const transcoderSchema: Schema = {
  type: ['object', 'null'],
  properties: {
    video: { type: 'array', items: videoTrackSchema },
    audio: audioTrackSchema,
    global: {
      type: 'object',
      properties: {
        hw: oneOfValues(['cpu', 'nvenc', 'qsv', 'coder']),
        deviceid: { anyOf: [{ enum: ['auto'] }, int(0)] },
        target: oneOfValues(['uhdtv', 'hdtv', 'sdtv_pal', 'sdtv_ntsc']),
      },
    },
    decoder: { type: 'object', properties: { pix_fmt: str(), deinterlace: bool } },
  },
};

const dvrSchema: Schema = {
  type: 'object',
  properties: {
    reference: str({ description: 'Name of a DVR storage of /dvrs.' }),
    root: str(),
    expiration: int(0),
    episodes_expiration: int(0),
    storage_limit: int(0),
    disk_usage_limit: int(0, 100),
    dvr_offline: bool,
    dvr_replicate: bool,
    copy: str(),
    schedule: { type: 'array', items: { type: 'array', items: int(0, 2359), minItems: 2, maxItems: 2 } },
  },
};

const authSchema: Schema = {
  type: 'object',
  properties: {
    url: str(),
    domains: { type: 'array', items: str() },
    max_sessions: int(0),
    allowed_countries: { type: 'array', items: str({ pattern: '^[A-Z]{2}$' }) },
    disallowed_countries: { type: 'array', items: str({ pattern: '^[A-Z]{2}$' }) },
    soft_limitation: bool,
    session_keys: { type: 'array', items: oneOfValues(['ip', 'name', 'token', 'proto']) },
    extra: strMap(),
  },
};

const playbackHeadersSchema: Schema = {
  type: 'object',
  properties: {
    playback: oneOfValues(['live', 'dvr']),
    protocols: { type: 'object' },
    headers: strMap(10, [1, 64]),
    segment_headers: strMap(10, [1, 64]),
  },
};

/** The stream configuration of PUT /streams/<name> and POST /streams. */
export const streamConfigSchema: Schema = {
  type: 'object',
  properties: {
    name: str({ readOnly: true, description: 'The identifier; taken from the path, may contain `/`.' }),
    named_by: { ...oneOfValues(['config', 'user', 'remote', 'external']), readOnly: true },
    stats: { type: 'object', readOnly: true },
    static: bool,
    position: { type: ['integer', 'null'], minimum: 0 },
    title: str(),
    comment: str(),
    disabled: bool,
    template: str(),
    inputs: { type: 'array', items: inputSchema },
    pushes: { type: 'array', items: pushSchema },
    transcoder: transcoderSchema,
    dvr: dvrSchema,
    thumbnails: {
      type: 'object',
      properties: { url: str(), enabled: { anyOf: [bool, { enum: ['ondemand'] }] }, sizes: { type: 'array', items: { type: 'object', properties: { width: int(1), height: int(1) } } }, hw: oneOfValues(['cpu', 'nvenc', 'qsv', 'coder']), deviceid: { anyOf: [{ enum: ['auto'] }, int(0)] } },
    },
    backup: { type: 'object', properties: { file: str(), timeout: int(0), audio_timeout: int(0), video_timeout: int(0), transcode: bool, dvr: bool } },
    on_play: authSchema,
    on_publish: authSchema,
    playback_headers: { type: 'array', items: playbackHeadersSchema },
    labels: strMap(),
    provider: str(),
    password: str(),
    clients_timeout: { anyOf: [int(0), bool] },
    source_timeout: { anyOf: [int(0), { enum: [false] }] },
    retry_limit: int(0),
    epg_enabled: bool,
    add_audio_only: bool,
    segment_count: int(1),
    segment_duration: int(1000, 15000, 'milliseconds'),
    chunk_duration: int(1),
    hls_scte35: oneOfValues(['aws', 'scte35', 'rfc8216']),
    output_audio: oneOfValues(['keep', 'aac', 'add_aac']),
    auth_token: str(),
    psi_version: int(0, 31),
  },
};

// ---- validation ----------------------------------------------------------------------------

function typeOf(value: unknown): JsonType | 'undefined' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType | 'undefined';
}

function typeMatches(actual: JsonType | 'undefined', wanted: JsonType): boolean {
  return actual === wanted || (wanted === 'number' && actual === 'integer');
}

/**
 * Check `value` against `schema`. Returns the value with unknown and read-only members dropped
 * (unknown request fields are ignored, section 1.6); problems carry the RFC 6901 pointer.
 */
export function validateBody(value: unknown, schema: Schema, path: (string | number)[] = [], problems: ApiErrorObject[] = []): { value: Json | undefined; problems: ApiErrorObject[] } {
  const cleaned = check(value, schema, path, problems);
  return { value: cleaned, problems };
}

function problem(path: readonly (string | number)[], title: string, code = 'invalid_value'): ApiErrorObject {
  return { code, title, source: { pointer: jsonPointer(path) } };
}

function check(value: unknown, schema: Schema, path: (string | number)[], problems: ApiErrorObject[]): Json | undefined {
  const at = () => (path.length === 0 ? 'the body' : jsonPointer(path));
  if (schema.anyOf) {
    for (const alt of schema.anyOf) {
      const sub: ApiErrorObject[] = [];
      const v = check(value, alt, path, sub);
      if (sub.length === 0) return v;
    }
    problems.push(problem(path, `${at()} matches none of the allowed forms`));
    return undefined;
  }
  if (schema.enum && !schema.enum.some((e) => e === value)) {
    problems.push(problem(path, `${at()} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`));
    return undefined;
  }
  const actual = typeOf(value);
  if (schema.type !== undefined) {
    const wanted = typeof schema.type === 'string' ? [schema.type] : schema.type;
    if (!wanted.some((w) => typeMatches(actual, w))) {
      problems.push(problem(path, `${at()} must be ${wanted.join(' or ')}, got ${actual === 'integer' ? 'number' : actual}`));
      return undefined;
    }
  }
  switch (actual) {
    case 'integer':
    case 'number': {
      const n = value as number;
      if (schema.minimum !== undefined && n < schema.minimum) problems.push(problem(path, `${at()} must be >= ${schema.minimum}`));
      if (schema.maximum !== undefined && n > schema.maximum) problems.push(problem(path, `${at()} must be <= ${schema.maximum}`));
      return n;
    }
    case 'string': {
      const s = value as string;
      if (schema.minLength !== undefined && s.length < schema.minLength) problems.push(problem(path, `${at()} must have at least ${schema.minLength} characters`));
      if (schema.maxLength !== undefined && s.length > schema.maxLength) problems.push(problem(path, `${at()} must have at most ${schema.maxLength} characters`));
      if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(s)) problems.push(problem(path, `${at()} does not match ${schema.pattern}`));
      return s;
    }
    case 'array': {
      const arr = value as unknown[];
      if (schema.minItems !== undefined && arr.length < schema.minItems) problems.push(problem(path, `${at()} must have at least ${schema.minItems} items`));
      if (schema.maxItems !== undefined && arr.length > schema.maxItems) problems.push(problem(path, `${at()} must have at most ${schema.maxItems} items`));
      return arr.map((item, i) => (schema.items ? check(item, schema.items, [...path, i], problems) : (item as Json)) ?? null);
    }
    case 'object': {
      const obj = value as Record<string, unknown>;
      const out: JsonRecord = {};
      for (const key of schema.required ?? []) {
        if (obj[key] === undefined || obj[key] === null) problems.push(problem([...path, key], `${jsonPointer([...path, key])} is required`, 'required'));
      }
      const keys = Object.keys(obj);
      if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) problems.push(problem(path, `${at()} must have at most ${schema.maxProperties} members`));
      for (const key of keys) {
        const member = schema.properties?.[key];
        const sub = member ?? schema.additionalProperties;
        if (!sub) continue; // unknown member: ignored
        if (member?.readOnly) continue; // set by the server: ignored
        const v = obj[key];
        if (v === null && !path.some((p) => typeof p === 'number')) {
          // null removes a stored value (merge patch): kept so the merge sees it. Inside arrays,
          // which are replaced whole, null is an ordinary value and must fit the schema.
          out[key] = null;
          continue;
        }
        const c = check(v, sub, [...path, key], problems);
        if (c !== undefined) out[key] = c;
      }
      return schema.properties || schema.additionalProperties ? out : (obj as JsonRecord);
    }
    default:
      return value as Json;
  }
}

// ---- GET /schema ---------------------------------------------------------------------------

const errorSchema = {
  type: 'object',
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          status: { type: 'string' },
          code: { type: 'string' },
          title: { type: 'string' },
          source: { type: 'object', properties: { pointer: { type: 'string' }, parameter: { type: 'string' } } },
          meta: { type: 'object', additionalProperties: { type: ['string', 'integer'] } },
        },
      },
    },
  },
};

function collection(key: string, item: object): object {
  return {
    type: 'object',
    properties: {
      [key]: { type: 'array', items: item },
      estimated_count: { type: 'integer' },
      next: { type: ['string', 'null'] },
      prev: { type: ['string', 'null'] },
      timing: { type: 'object', additionalProperties: { type: 'integer' } },
    },
  };
}

/** Paths and schemas described beside their own code (event sinks), merged into GET /schema. */
export interface OpenApiPart {
  readonly paths: Readonly<Record<string, object>>;
  readonly schemas: Readonly<Record<string, object>>;
}

/** The OpenAPI 3.1 description of what this simulator serves (GET /schema). */
export function openApiDocument(version: string, parts: readonly OpenApiPart[] = []): object {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const json = (schema: object) => ({ content: { 'application/json': { schema } } });
  const errors = { '400': { description: 'Bad parameter or body', ...json(ref('error_response')) }, '401': { description: 'Missing or wrong credentials', ...json(ref('error_response')) }, '403': { description: 'Credentials lack the right', ...json(ref('error_response')) } };
  const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: 'Stream name; a `/` inside it is written `%2F`.' };
  const filterNote = 'Any other parameter filters: `<field>=<v1,v2>`, `<field>_ne`, `_lt`, `_lte`, `_gt`, `_gte`, `_is=null`, `_is_not=null`, `_like`; nested fields with dots; several filters AND.';
  return {
    openapi: '3.1.0',
    info: { title: 'Flussonic Media Server API (simulator)', version, description: 'Served by the flussonic-exporter simulator. ' + filterNote },
    servers: [{ url: '/streamer/api/v3' }],
    security: [{ basicAuth: [] }, { bearerAuth: [] }],
    paths: {
      '/streams': {
        get: { operationId: 'streams_list', parameters: COLLECTION_PARAMETERS.map((p) => ({ ...p, in: 'query', required: false })), description: filterNote, responses: { '200': { description: 'Streams', ...json(ref('streams_list')) }, ...errors } },
        post: {
          operationId: 'stream_create',
          description: 'Creates a stream; the server generates its name unless the body has one. Repeating a request with the same `Idempotency-Key` returns the first result.',
          parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }],
          requestBody: { required: false, ...json(ref('stream_config')) },
          responses: { '201': { description: 'Created', ...json(ref('stream')) }, '409': { description: 'A stream of that name exists', ...json(ref('error_response')) }, ...errors },
        },
      },
      '/streams/{name}': {
        get: { operationId: 'stream_get', parameters: [nameParam, { name: 'select', in: 'query', required: false, schema: { type: 'string' } }], responses: { '200': { description: 'Stream', ...json(ref('stream')) }, '404': { description: 'No such stream', ...json(ref('error_response')) }, ...errors } },
        put: {
          operationId: 'stream_save',
          description: 'Upsert with JSON Merge Patch (RFC 7396): absent members are kept, `null` removes, arrays are replaced whole.',
          parameters: [nameParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('stream_config') }, 'application/merge-patch+json': { schema: ref('stream_config') } } },
          responses: { '200': { description: 'Updated', ...json(ref('stream')) }, '201': { description: 'Created', ...json(ref('stream')) }, ...errors },
        },
        delete: { operationId: 'stream_delete', parameters: [nameParam], responses: { '204': { description: 'Deleted (also when it did not exist)' }, ...errors } },
      },
      '/sessions': { get: { operationId: 'sessions_list', parameters: COLLECTION_PARAMETERS.map((p) => ({ ...p, in: 'query', required: false })), responses: { '200': { description: 'Open play sessions', ...json(ref('sessions_list')) }, ...errors } } },
      '/sessions/{id}': { get: { operationId: 'session_get', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'Session', ...json(ref('session')) }, '404': { description: 'No such session', ...json(ref('error_response')) } } } },
      '/config/stats': { get: { operationId: 'config_stats_get', responses: { '200': { description: 'Server stats', ...json(ref('server_stats')) }, ...errors } } },
      '/dvrs': { get: { operationId: 'dvrs_list', parameters: COLLECTION_PARAMETERS.map((p) => ({ ...p, in: 'query', required: false })), responses: { '200': { description: 'DVR storages', ...json(ref('dvrs_list')) }, ...errors } } },
      '/dvrs/{name}': { get: { operationId: 'dvr_get', parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'DVR storage', ...json(ref('dvr')) } } } },
      '/schema': { get: { operationId: 'schema_get', responses: { '200': { description: 'This document' } } } },
      ...Object.assign({}, ...parts.map((p) => p.paths)),
    },
    components: {
      securitySchemes: { basicAuth: { type: 'http', scheme: 'basic' }, bearerAuth: { type: 'http', scheme: 'bearer', description: 'base64 of `user:password`' } },
      schemas: {
        stream_config: streamConfigSchema,
        stream: { allOf: [ref('stream_config'), { type: 'object', required: ['name'], properties: { stats: { type: 'object' } } }] },
        streams_list: collection('streams', ref('stream')),
        session: {
          type: 'object',
          properties: {
            id: { type: 'string', format: 'uuid' },
            ip: { type: 'string' },
            proto: { type: 'string' },
            name: { type: 'string' },
            opened_at: { type: 'integer', minimum: 1000000000000, maximum: 10000000000000 },
            closed_at: { type: 'integer', minimum: 1000000000000, maximum: 10000000000000 },
            bytes: { type: 'integer' },
            country: { type: 'string' },
            dvr: { type: 'boolean' },
            secure: { type: 'boolean' },
            segments_container: { enum: ['cmaf', 'fmp4', 'mpegts'] },
            manifest_type: { enum: ['index', 'archive', 'event', 'rewind', 'timeshiftAbs', 'timeshiftRel'] },
          },
        },
        sessions_list: collection('sessions', ref('session')),
        server_stats: { type: 'object', properties: { cpu_usage: { type: 'integer' }, transcoder_devices: { type: 'array', items: { type: 'object' } } } },
        dvr: { type: 'object', required: ['name', 'root'], properties: { name: { type: 'string' }, root: { type: 'string' }, stats: { type: 'object', properties: { size: { type: 'integer' }, used: { type: 'integer' }, errors: { type: 'object', additionalProperties: { type: 'integer' } } } } } },
        dvrs_list: collection('dvrs', ref('dvr')),
        error_response: errorSchema,
        operation_type: { enum: [...OPERATION_TYPES] },
        ...Object.assign({}, ...parts.map((p) => p.schemas)),
      },
    },
  };
}
