/**
 * The families the event sink receiver fills (src/events/store.ts), declared like every
 * collector's. Per-server families are core (a few series per server, bounded by the kind table
 * and the protocol list); `source_lost_total` is in the streams budget's default tier, present at
 * 0 for every stream the poll exports; the other per-stream families are opt-in
 * (`events.families.*`) and created on a stream's first event.
 */
import { byDefault, defineFamilies, optionalEvent } from '../families/define.js';

const SS = ['server', 'stream'] as const;

export const EVENT_FAMILIES = defineFamilies(
  'events',
  {
    eventsTotal: { name: 'flussonic_events_total', type: 'counter', labels: ['server', 'event'],
      help: 'Events received from the server\'s event sink, by kind (event="other" for a kind the exporter does not know); resent events counted once.' },
    sourceLost: { name: 'flussonic_stream_source_lost_total', type: 'counter', labels: SS, tier: byDefault(1),
      help: 'Times the stream lost its source (source_closed events), also losses shorter than the poll interval; 0 for every exported stream.' },
    pushBlocked: { name: 'flussonic_stream_push_blocked_total', type: 'counter', labels: SS, tier: optionalEvent('push_blocked', 1),
      help: 'Pushes of the stream blocked (push_blocked events).' },
    streamClosed: { name: 'flussonic_stream_closed_total', type: 'counter', labels: SS, tier: optionalEvent('stream_closed', 1),
      help: 'Times the stream was closed (stream_closed events).' },
    playClosed: { name: 'flussonic_stream_play_sessions_closed_total', type: 'counter', labels: ['server', 'stream', 'proto'], tier: optionalEvent('play_per_stream'),
      help: 'Play sessions of the stream closed (play_closed events), by protocol.' },
    streamPlayDuration: { name: 'flussonic_stream_play_session_duration_seconds', type: 'histogram', labels: ['server', 'stream', 'proto'], tier: optionalEvent('play_per_stream'),
      help: 'Exact lengths of the stream\'s closed play sessions (closed_at - opened_at), by protocol.' },
    playDuration: { name: 'flussonic_play_session_duration_seconds', type: 'histogram', labels: ['server', 'proto'],
      help: 'Exact lengths of closed play sessions (play_closed: closed_at - opened_at, else duration), by protocol; _count is the sessions closed.' },
    deviceShortage: { name: 'flussonic_transcoder_device_shortages_total', type: 'counter', labels: ['server'],
      help: 'Times a transcoder lacked a device\'s resources (transcoder_device_insufficient_resources events).' },
    batchesTotal: { name: 'flussonic_exporter_event_batches_total', type: 'counter', labels: ['server', 'code'],
      help: 'Event sink batches answered, by status code (server="" for a name the exporter does not know: 404).' },
    rejectedTotal: { name: 'flussonic_exporter_events_rejected_total', type: 'counter', labels: ['server', 'reason'],
      help: 'Events of accepted batches not counted: reason not_object, no_kind (no event name), shape (a field of the wrong type for its kind, or a number outside its valid range).' },
    duplicateTotal: { name: 'flussonic_exporter_events_duplicate_total', type: 'counter', labels: ['server'],
      help: 'Events dropped as resent (an event_id already counted in the dedup window).' },
    withoutIdTotal: { name: 'flussonic_exporter_events_without_id_total', type: 'counter', labels: ['server'],
      help: 'Events counted without an event_id (so without deduplication).' },
  },
  ['pushBlocked', 'streamClosed', 'playClosed', 'streamPlayDuration', 'sourceLost'],
);

/** Buckets of play session lengths, in seconds: a few seconds (a failed start) to a day. */
export const SESSION_BUCKETS: readonly number[] = Object.freeze([1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200, 86_400]);
