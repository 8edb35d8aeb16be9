/**
 * The `events:` section: the event sink receiver (docs/events.md). The per-server secret is a
 * server setting (`events_secret`, schema.ts), so discovered servers take their template's.
 */
import { always, baseUrl, bool, fail, help, int, section, size, switches, text } from './kinds.js';

/** The per-stream event families that are opt-in (docs/cardinality.md). */
export const EVENT_SWITCHES = ['push_blocked', 'stream_closed', 'play_per_stream'] as const;
export type EventSwitch = (typeof EVENT_SWITCHES)[number];

const EVENT_SWITCH_HELP: Record<EventSwitch, string> = {
  push_blocked: 'flussonic_stream_push_blocked_total{server,stream}, created on a stream\'s first push_blocked event',
  stream_closed: 'flussonic_stream_closed_total{server,stream}, created on a stream\'s first stream_closed event',
  play_per_stream: 'flussonic_stream_play_sessions_closed_total and the session-duration histogram per stream and protocol, created on a stream\'s first play_closed event (the per-server histogram is always on)',
};

export const eventsSection = () =>
  section({
    enabled: bool().default(false).meta(help('accept Flussonic\'s event sink at POST /events/<server name> (docs/events.md)')),
    max_body_size: size(1024, '1KiB').prefault('4MiB').meta(help('largest batch body accepted; a larger one is answered 413')),
    max_events_per_batch: int(1, 1_000_000).default(10_000).meta(help('most events in one batch; a batch with more is answered 413')),
    dedup_window: int(64, 16_777_216).default(65_536).meta(help('event_ids remembered per server to drop resent events: an id more than this far below the newest one seen starts a new run of the server')),
    register: bool().default(false).meta(help('at start, PUT /event_sinks/<sink_name> on each configured server with its credentials, pointing at public_url')),
    sink_name: text().prefault('prometheus_exporter').meta(help('the name of the sink registered on each server')),
    public_url: baseUrl('the sink\'s secret is taken from each server\'s events_secret').optional().meta(help('the exporter\'s base URL as Flussonic reaches it, for register (required with register: true)', 'http://exporter:9228')),
    families: switches(Object.fromEntries(EVENT_SWITCHES.map((s) => [s, false])) as Record<EventSwitch, boolean>, (s) => EVENT_SWITCH_HELP[s]).meta(help('opt-in per-stream event families (all off by default)')),
  })
    .check(
      always((v, ctx) => {
        if (v.register === true && v.public_url === undefined) fail(ctx, undefined, () => 'required with register: true: the exporter\'s base URL as Flussonic reaches it', ['public_url']);
      }),
    )
    .transform((v) => ({
      enabled: v.enabled,
      maxBodyBytes: v.max_body_size,
      maxEventsPerBatch: v.max_events_per_batch,
      dedupWindow: v.dedup_window,
      register: v.register,
      sinkName: v.sink_name,
      ...(v.public_url !== undefined ? { publicUrl: v.public_url } : {}),
      families: v.families as Readonly<Record<EventSwitch, boolean>>,
    }));
