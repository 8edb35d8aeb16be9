/**
 * The exporter's own families, kept by the serving thread (self.ts) from what the pollers, the
 * discovery and the config loader report. Core: a few per target, never shed. Self-metric series
 * of a target carry its name in the `server` label (Catena targets too, with collector
 * `operations`).
 */
import { defineFamilies } from '../families/define.js';
import { BOOLEAN } from '../families/ranges.js';

const S = ['server'] as const;
const SC = ['server', 'collector'] as const;
const SRC = ['source'] as const;

export const SELF_FAMILIES = defineFamilies('self', {
  up: { name: 'flussonic_up', type: 'gauge', labels: S, range: BOOLEAN,
    help: '1 when the last poll of every enabled collector for this server succeeded, else 0.' },
  collectorSuccess: { name: 'flussonic_exporter_collector_success', type: 'gauge', labels: SC,
    help: 'Whether the last poll of this collector succeeded (1) or failed (0).' },
  collectorDurationSeconds: { name: 'flussonic_exporter_collector_duration_seconds', type: 'gauge', labels: SC,
    help: 'Wall time of the last poll of this collector, in seconds.' },
  lastSuccessTimestampSeconds: { name: 'flussonic_exporter_last_success_timestamp_seconds', type: 'gauge', labels: SC,
    help: 'Unix time when this collector last succeeded.' },
  apiRequestsTotal: { name: 'flussonic_exporter_api_requests_total', type: 'counter', labels: ['server', 'endpoint', 'code'],
    help: 'HTTP requests made to the upstream API, by status code (code="error" when no response arrived).' },
  apiErrorsTotal: { name: 'flussonic_exporter_api_errors_total', type: 'counter', labels: ['server', 'endpoint', 'reason'],
    help: 'Failed upstream requests by reason: timeout, connection, http, invalid_json, too_large, cursor_loop, auth, shape (a JSON document of the wrong form).' },
  apiResponseBytesTotal: { name: 'flussonic_exporter_api_response_bytes_total', type: 'counter', labels: ['server', 'endpoint'],
    help: 'Response body bytes read from the upstream API.' },
  addressRefusedTotal: { name: 'flussonic_exporter_address_refused_total', type: 'counter', labels: ['server', 'range'],
    help: 'Connections to a discovered server refused at connect time because its address resolved to range loopback (127.0.0.0/8, ::1; unless discovery.allow_loopback) or link_local (169.254.0.0/16, fe80::/10).' },
  labelValuesTruncatedTotal: { name: 'flussonic_exporter_label_values_truncated_total', type: 'counter', labels: ['server', 'family'],
    help: 'Label values longer than max_label_value_bytes, written cut at a character boundary with a hash suffix of the whole value.' },
  seriesDroppedTotal: { name: 'flussonic_exporter_series_dropped_total', type: 'counter', labels: SC,
    help: 'Series not exported because a cardinality limit (max_series) was hit.' },
  invalidValuesTotal: { name: 'flussonic_exporter_invalid_values_total', type: 'counter', labels: ['server', 'family'],
    help: 'Upstream values outside their family\'s valid range (counters >= 0, ratios 0..1, sane timestamps and temperatures), not exported.' },
  seriesShedTotal: { name: 'flussonic_exporter_series_shed_total', type: 'counter', labels: ['server', 'collector', 'family'],
    help: 'Series of a whole family not exported because the collector\'s max_series was reached: optional families are shed first, then default ones (docs/cardinality.md).' },
  buildInfo: { name: 'flussonic_exporter_build_info', type: 'gauge', labels: ['version', 'revision', 'nodejs_version'],
    help: 'Build information of the exporter (revision: git commit at build time, unknown outside git); value 1.' },
  demo: { name: 'flussonic_exporter_demo', type: 'gauge', labels: [],
    help: '1 when the exporter runs in demo mode on simulated data, else 0.' },
  configLastReloadSuccess: { name: 'flussonic_exporter_config_last_reload_success', type: 'gauge', labels: [],
    help: '1 if the last configuration (re)load succeeded, else 0.' },
  configLastReloadSuccessTimestampSeconds: { name: 'flussonic_exporter_config_last_reload_success_timestamp_seconds', type: 'gauge', labels: [],
    help: 'Unix time of the last successful configuration (re)load.' },
  webConfigLastReloadSuccess: { name: 'flussonic_exporter_web_config_last_reload_success', type: 'gauge', labels: [], range: BOOLEAN,
    help: '1 if the last web config (--web.config.file) (re)load succeeded, else 0 (invalid, or it would turn TLS or basic auth off).' },
  webConfigLastReloadSuccessTimestampSeconds: { name: 'flussonic_exporter_web_config_last_reload_success_timestamp_seconds', type: 'gauge', labels: [],
    help: 'Unix time of the last successful web config (re)load.' },
  httpAuthThrottledTotal: { name: 'flussonic_exporter_http_auth_throttled_total', type: 'counter', labels: ['reason'],
    help: 'Requests answered 429 because their basic auth check could not be queued: queue_full (too many bcrypt comparisons waiting), queue_timeout (waited too long).' },
  httpConnectionsDroppedTotal: { name: 'flussonic_exporter_http_connections_dropped_total', type: 'counter', labels: ['reason'],
    help: 'Connections closed by the listeners\' limits: replaced (the longest-idle one, to make room at --web.max-connections), refused (a new one at the cap, all busy), header_timeout (no complete request headers within --web.read-header-timeout).' },
  shardInfo: { name: 'flussonic_exporter_shard_info', type: 'gauge', labels: ['shard', 'total_shards'],
    help: 'Which shard this replica is (--shard/--total-shards or the StatefulSet ordinal); value 1.' },
  ownedTargets: { name: 'flussonic_exporter_owned_targets', type: 'gauge', labels: ['kind'],
    help: 'Targets this replica polls after discovery and sharding, by kind (server, catena).' },
  discoveryTargets: { name: 'flussonic_exporter_discovery_targets', type: 'gauge', labels: SRC,
    help: 'Servers the last good refresh of this discovery source found (before sharding).' },
  discoveryFailuresTotal: { name: 'flussonic_exporter_discovery_failures_total', type: 'counter', labels: SRC,
    help: 'Failed refreshes of this discovery source; the last good list is kept.' },
  discoveryRefusedTotal: { name: 'flussonic_exporter_discovery_refused_total', type: 'counter', labels: ['source', 'reason'],
    help: 'Lists of this discovery source refused whole for their length: reason source_cap (discovery.max_targets_per_source) or total_cap (discovery.max_targets); the last good list is kept.' },
  discoveryLastSuccessTimestampSeconds: { name: 'flussonic_exporter_discovery_last_success_timestamp_seconds', type: 'gauge', labels: SRC,
    help: 'Unix time of the last successful refresh of this discovery source.' },
  httpRequestsTotal: { name: 'flussonic_exporter_http_requests_total', type: 'counter', labels: ['path', 'code'],
    help: 'HTTP requests the exporter answered, by route path (from the route table; path="other" for any other path) and status code, refusals (401, 405, 429, 503) included.' },
  workerRestartsTotal: { name: 'flussonic_exporter_worker_restarts_total', type: 'counter', labels: [],
    help: 'Worker threads restarted after they crashed (uncaught error, out of memory); the log names the reason.' },
  pollDeadlineMissedTotal: { name: 'flussonic_exporter_poll_deadline_missed_total', type: 'counter', labels: S,
    help: 'Polls of this target that reached their deadline (below the poll interval) before every collector finished; the poll fails and the requests in flight are aborted.' },
});
