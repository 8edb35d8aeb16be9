/**
 * `event_sinks` as Flussonic serves them (23.05 OpenAPI: event_sinks_list, event_sink_config;
 * GET /event_sinks, GET/PUT/DELETE /event_sinks/<name>) and the events the simulator posts to each.
 *
 * A PUT is a JSON Merge Patch of the stored configuration, validated like the other writes; `url`
 * is required. Every sink keeps its configuration as given (also `log://`, `jsonlog://`, `pid://`
 * targets), and only http(s) sinks receive events (delivery: event-delivery.ts).
 *
 * Filters (`only`, `except`): a list of filter objects `{field: [values]}`. An event matches an object
 * when, for every field, its value matches one of the values (`*` is a wildcard: `source_*`);
 * `only` passes events that match one of its objects, `except` drops those that match one of its.
 */
import { ApiError, notFound, type ApiErrorObject } from './errors.js';
import { SinkDelivery, type DeliveryDeps, type SinkFault, type SinkState } from './event-delivery.js';
import type { EventEmitter, SimEvent } from './events.js';
import { mergePatch } from './merge-patch.js';
import type { Json, JsonRecord } from './query.js';
import { validateBody, type OpenApiPart, type Schema } from './schema.js';

const LOG_LEVELS = ['none', 'debug', 'info', 'notice', 'warning', 'error', 'alert', 'critical'] as const;
const nullableInt = (minimum: number, maximum: number, description: string): Schema => ({ type: ['integer', 'null'], minimum, maximum, description });
const filterList: Schema = {
  type: ['array', 'null'],
  maxItems: 64,
  items: { type: 'object', maxProperties: 32, additionalProperties: { type: 'array', maxItems: 256, items: { type: 'string', maxLength: 1024 } } },
};

/** What PUT /event_sinks/<name> accepts (the fields of the API's event_sink_config). */
export const eventSinkConfigSchema: Schema = {
  type: 'object',
  required: ['url'],
  properties: {
    name: { type: 'string', readOnly: true },
    url: { type: 'string', maxLength: 4096, pattern: '^(log|jsonlog|http|https)://.+$|^pid://<[0-9]+.[0-9]+.[0-9]+>$', description: 'http(s)://... receives the events; log://, jsonlog:// and pid:// are kept but not written' },
    only: filterList,
    except: filterList,
    throttle_delay: nullableInt(0, 3600, 'seconds an event waits in the buffer before a batch is sent (more than 100 waiting: at once); default 1'),
    max_size: nullableInt(0, Number.MAX_SAFE_INTEGER, 'log files only'),
    max_depth: nullableInt(0, 1_000_000, 'log files only'),
    resend_limit: nullableInt(0, 1_000_000, 'events kept for delivery while the sink fails; default (unlimited) is 10,000 here, the oldest dropped'),
    resend_timeout: nullableInt(1, 86_400, 'seconds between resends of an unconfirmed batch; default 10'),
    resend_notifications_limit: nullableInt(0, 1_000_000, 'deprecated alias of resend_limit'),
    resend_notifications_timeout: nullableInt(1, 86_400, 'deprecated alias of resend_timeout'),
    level: { type: ['string', 'null'], enum: [...LOG_LEVELS, null] },
    verbose: { type: ['string', 'null'], enum: [...LOG_LEVELS, null] },
    extra: { type: ['object', 'null'], additionalProperties: { type: 'string' }, maxProperties: 64 },
  },
};

/** GET /schema's part: the event_sinks paths and schemas. */
export const EVENT_SINKS_OPENAPI: OpenApiPart = (() => {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const json = (schema: object) => ({ content: { 'application/json': { schema } } });
  const name = { name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' } };
  const error = { description: 'Bad body or name', ...json(ref('error_response')) };
  return {
    paths: {
      '/event_sinks': { get: { operationId: 'event_sinks_list', responses: { '200': { description: 'Event sinks', ...json(ref('event_sinks_list')) } } } },
      '/event_sinks/{name}': {
        get: { operationId: 'event_sink_get', parameters: [name], responses: { '200': { description: 'Event sink', ...json(ref('event_sink_config')) }, '404': { description: 'No such event sink', ...json(ref('error_response')) } } },
        put: { operationId: 'event_sink_save', description: 'Upsert with JSON Merge Patch; `url` is required of the result.', parameters: [name], requestBody: { required: true, ...json(ref('event_sink_config')) }, responses: { '200': { description: 'Saved', ...json(ref('event_sink_config')) }, '400': error } },
        delete: { operationId: 'event_sink_delete', parameters: [name], responses: { '204': { description: 'Deleted (also when it did not exist)' } } },
      },
    },
    schemas: {
      event_sink_config: eventSinkConfigSchema,
      event_sinks_list: { type: 'object', properties: { event_sinks: { type: 'array', items: ref('event_sink_config') }, estimated_count: { type: 'integer' }, next: { type: ['string', 'null'] }, prev: { type: ['string', 'null'] }, timing: { type: 'object' } } },
    },
  };
})();

const PATCH_SCHEMA: Schema = { ...eventSinkConfigSchema, required: [] };

/** At most this many sinks (a PUT beyond it is refused). */
const MAX_SINKS = 64;
const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

type Filter = Readonly<Record<string, readonly string[]>>;

/** `*` matches any run of characters; everything else literally (no regular expression). */
export function globMatch(pattern: string, value: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === value;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last)) return false;
  let at = first.length;
  const end = value.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = value.indexOf(parts[i]!, at);
    if (found < 0 || found + parts[i]!.length > end) return false;
    at = found + parts[i]!.length;
  }
  return true;
}

function matchesFilter(event: SimEvent, filter: Filter): boolean {
  for (const [field, values] of Object.entries(filter)) {
    const raw = event[field];
    const value = raw === undefined || raw === null ? '' : typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
    if (!values.some((v) => globMatch(v, value))) return false;
  }
  return true;
}

/** Whether a sink with these filters gets the event. */
export function passes(event: SimEvent, only: readonly Filter[] | undefined, except: readonly Filter[] | undefined): boolean {
  if (only && only.length > 0 && !only.some((f) => matchesFilter(event, f))) return false;
  return !(except && except.some((f) => matchesFilter(event, f)));
}

interface Sink {
  config: JsonRecord;
  delivery: SinkDelivery | undefined;
}

export interface EventSinksDeps extends DeliveryDeps {
  readonly emitter: EventEmitter;
}

export class EventSinks {
  private readonly sinks = new Map<string, Sink>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: EventSinksDeps) {}

  /** Configurations, by name. */
  list(): JsonRecord[] {
    return [...this.sinks.keys()].sort().map((name) => this.sinks.get(name)!.config);
  }

  get(name: string): JsonRecord | undefined {
    return this.sinks.get(name)?.config;
  }

  /** PUT semantics: merge patch over the stored configuration, validated; throws ApiError (400). */
  put(name: string, body: unknown): JsonRecord {
    if (!NAME_PATTERN.test(name)) throw new ApiError(400, [{ code: 'invalid_value', title: 'an event sink name has 1 to 64 letters, digits, _ . -', source: { pointer: '/name' } }]);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ApiError(400, [{ code: 'invalid_value', title: 'the body must be a JSON object (an event_sink_config)', source: { pointer: '' } }]);
    }
    // The body may be partial (a merge patch): `url` is required of the merged configuration.
    const first = validateBody(body, PATCH_SCHEMA);
    if (first.problems.length > 0) throw new ApiError(400, first.problems);
    const existing = this.sinks.get(name);
    if (!existing && this.sinks.size >= MAX_SINKS) throw new ApiError(400, [{ code: 'too_many', title: `at most ${MAX_SINKS} event sinks` }]);
    const merged = mergePatch(existing?.config ?? {}, first.value as Json) as JsonRecord;
    delete merged.name;
    const recheck = validateBody(merged, eventSinkConfigSchema);
    if (recheck.problems.length > 0) throw new ApiError(400, recheck.problems as ApiErrorObject[]);
    const config: JsonRecord = { name, ...(recheck.value as JsonRecord) };
    const sink: Sink = existing ?? { config, delivery: undefined };
    sink.config = config;
    const deliverable = /^https?:\/\//i.test(config.url as string);
    if (deliverable) {
      sink.delivery ??= new SinkDelivery(this.deps);
      sink.delivery.configure(config);
    } else if (sink.delivery) {
      sink.delivery.stop();
      sink.delivery = undefined;
    }
    this.sinks.set(name, sink);
    this.resubscribe();
    return config;
  }

  /** True when it existed. */
  delete(name: string): boolean {
    const sink = this.sinks.get(name);
    if (!sink) return false;
    sink.delivery?.stop();
    this.sinks.delete(name);
    this.resubscribe();
    return true;
  }

  /** Delivery state of a sink (queue, batches sent/confirmed/resent/replayed, events dropped). */
  state(name: string): SinkState {
    const sink = this.sinks.get(name);
    if (!sink) throw notFound('event_sink', name);
    return sink.delivery?.state() ?? SinkDelivery.idleState();
  }

  /** Set (or clear with null) a delivery fault of one sink. */
  fault(name: string, fault: SinkFault | null): void {
    const sink = this.sinks.get(name);
    if (!sink?.delivery) throw new Error(`no http(s) event sink named ${JSON.stringify(name)}`);
    sink.delivery.setFault(fault);
  }

  /** True while some sink can receive events (an http(s) url). */
  get delivering(): boolean {
    return this.unsubscribe !== undefined;
  }

  /** Send what is due (throttle delay over, resend time reached) at the current simulated time. */
  pump(): void {
    for (const sink of this.sinks.values()) sink.delivery?.pump();
  }

  /** Resolves when no batch is on its way (also batches sent while waiting). */
  async settled(): Promise<void> {
    for (let round = 0; round < 1000; round++) {
      const flying = [...this.sinks.values()].map((s) => s.delivery?.flying()).filter((p): p is Promise<void> => p !== undefined);
      if (flying.length === 0) return;
      await Promise.all(flying);
    }
  }

  /** The server restarted: what was buffered in memory is gone. */
  restart(): void {
    for (const sink of this.sinks.values()) sink.delivery?.reset();
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await Promise.all([...this.sinks.values()].map((s) => s.delivery?.stop()));
  }

  private resubscribe(): void {
    const any = [...this.sinks.values()].some((s) => s.delivery !== undefined);
    if (any && !this.unsubscribe) {
      this.unsubscribe = this.deps.emitter.subscribe((event) => {
        for (const sink of this.sinks.values()) {
          const config = sink.config;
          if (sink.delivery && passes(event, config.only as Filter[] | undefined, config.except as Filter[] | undefined)) sink.delivery.enqueue(event);
        }
      });
    } else if (!any && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = undefined;
    }
  }
}
