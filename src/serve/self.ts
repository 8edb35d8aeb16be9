/**
 * The exporter's own metrics: every family whose owner is 'self' in the catalogue (names, HELP
 * and labels from there) and `flussonic_catena_up`, kept in OwnFamily stores that render a family
 * again only after it changed; then prom-client's default process/Node.js metrics, on a Registry
 * of their own (never the global one, so two exporters in one process, as in tests, do not share
 * them). Rendered per scrape, after the cached upstream exposition.
 *
 * Self-metric series of a target carry its name in the `server` label (Catena targets too, with
 * collector `operations`), except `flussonic_catena_up{catena}`.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import { API_ERROR_REASONS } from '../lib/errors.js';
import type { ApiStats } from '../flussonic/api.js';
import type { ApiCounts } from '../threads/protocol.js';
import { readRevision } from '../version.js';
import type { FamilyDef } from '../families/define.js';
import { familiesOf, familyByName } from './catalogue.js';
import { EventLoopDelay, EVENT_LOOP_DELAY_METRICS } from './event-loop-delay.js';
import { OwnFamily, type Labels } from './own-family.js';

/**
 * Default metrics that are gauges named `_total`, which `promtool check metrics` rejects
 * ("non-counter metrics should not have _total suffix"); their per-type twins stay.
 */
const DEFAULT_METRICS_DROPPED = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];
/** The largest timer period (about 24.8 days). */
const NEVER_MS = 2 ** 31 - 1;

export interface SelfMetricsOptions {
  readonly version: string;
  /** Git commit at build time (default: readRevision(), `unknown` outside git). */
  readonly revision?: string;
  /** Demo mode: flussonic_exporter_demo 1. */
  readonly demo?: boolean;
  /** Register prom-client's default process/nodejs metrics (default true). */
  readonly defaultMetrics?: boolean;
}

/**
 * How long a rendering of the self-metrics may be reused while none of the exporter's own series
 * changed: only prom-client's process/Node.js figures can be this much older than the scrape.
 */
export const RENDER_REUSE_MS = 250;

export class SelfMetrics {
  readonly registry = new Registry();
  /**
   * The last rendering, reused by concurrent and closely following scrapes. Rendering (the default
   * process metrics read /proc) cost ~0.7 ms of the ~0.8 ms CPU of a scrape, so 20 concurrent
   * scrapers queued behind each other: p50 14 ms -> 4 ms with the reuse (npm run bench).
   */
  private rendered: { readonly text: Promise<string>; readonly version: number; readonly at: number } | undefined;
  /** Bumped by every change of an own series: a changed series is never served stale. */
  private version = 0;
  /** The exporter's own families, in catalogue order (prom-client's registry has only its defaults). */
  private readonly families = new Map<string, OwnFamily>();
  /** Endpoints seen per target, to export each error reason from 0 once. */
  private readonly endpointsSeen = new Map<string, Set<string>>();
  /** The kinds of target polled under each name in flussonic_exporter_poll_deadline_missed_total{server}. */
  private readonly deadlineKinds = new Map<string, Set<'server' | 'catena'>>();
  private readonly eventLoop: EventLoopDelay | undefined;

  constructor(options: SelfMetricsOptions) {
    for (const def of [...familiesOf('self'), familyByName('flussonic_catena_up')]) this.register(def);
    this.gauge('flussonic_exporter_build_info').set({ version: options.version, revision: options.revision ?? readRevision(), nodejs_version: process.versions.node }, 1);
    this.gauge('flussonic_exporter_demo').set({}, options.demo ? 1 : 0);
    this.counter('flussonic_exporter_worker_restarts_total').inc({}, 0);
    if (options.defaultMetrics !== false) {
      // prom-client's own event-loop delay sampler would wake the process every 10 ms for good: one
      // that never fires, its gauges replaced by ones sampled while there is work.
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: NEVER_MS });
      for (const name of [...DEFAULT_METRICS_DROPPED, ...EVENT_LOOP_DELAY_METRICS]) this.registry.removeSingleMetric(name);
      this.eventLoop = new EventLoopDelay(this.registry);
    }
  }

  /** The accounting sink of one target's upstream client. */
  apiStats(target: string): ApiStats {
    const requests = this.counter('flussonic_exporter_api_requests_total');
    const errors = this.counter('flussonic_exporter_api_errors_total');
    const bytes = this.counter('flussonic_exporter_api_response_bytes_total');
    return {
      request: (endpoint, code) => {
        this.seeEndpoint(target, endpoint);
        requests.inc({ server: target, endpoint, code }, 1);
        this.version++;
      },
      error: (endpoint, reason) => {
        this.seeEndpoint(target, endpoint);
        errors.inc({ server: target, endpoint, reason }, 1);
        this.version++;
      },
      responseBytes: (endpoint, n) => {
        bytes.inc({ server: target, endpoint }, n);
        this.version++;
      },
    };
  }

  /**
   * Adds a worker's request accounting since its last report. The running totals live here, on
   * the main thread, so the counters go on from where they were when a worker is restarted.
   */
  addApiCounts(target: string, counts: ApiCounts): void {
    const requests = this.counter('flussonic_exporter_api_requests_total');
    const errors = this.counter('flussonic_exporter_api_errors_total');
    const bytes = this.counter('flussonic_exporter_api_response_bytes_total');
    for (const [endpoint, code, n] of counts.requests) {
      this.seeEndpoint(target, endpoint);
      requests.inc({ server: target, endpoint, code }, n);
    }
    for (const [endpoint, reason, n] of counts.errors) {
      this.seeEndpoint(target, endpoint);
      errors.inc({ server: target, endpoint, reason }, n);
    }
    for (const [endpoint, n] of counts.bytes) bytes.inc({ server: target, endpoint }, n);
    if (counts.refused) for (const [range, n] of counts.refused) this.counter('flussonic_exporter_address_refused_total').inc({ server: target, range }, n);
    this.version++;
  }

  setServerUp(server: string, up: boolean): void {
    this.gauge('flussonic_up').set({ server }, up ? 1 : 0);
    this.version++;
  }

  setCatenaUp(catena: string, up: boolean): void {
    this.gauge('flussonic_catena_up').set({ catena }, up ? 1 : 0);
    this.version++;
  }

  /** The outcome of one collector run: success, wall time, and the time of success. */
  collectorRun(target: string, collector: string, success: boolean, durationSeconds: number, nowSeconds: number): void {
    const labels = { server: target, collector };
    this.gauge('flussonic_exporter_collector_success').set(labels, success ? 1 : 0);
    this.gauge('flussonic_exporter_collector_duration_seconds').set(labels, durationSeconds);
    if (success) this.gauge('flussonic_exporter_last_success_timestamp_seconds').set(labels, nowSeconds);
    // Exported from 0, so that increase() sees the first drop.
    this.counter('flussonic_exporter_series_dropped_total').inc(labels, 0);
    this.version++;
  }

  seriesDropped(target: string, collector: string, count: number): void {
    if (count > 0) this.counter('flussonic_exporter_series_dropped_total').inc({ server: target, collector }, count);
    this.version++;
  }

  /** Sets a self gauge of the catalogue from outside the poller (the fleet: shard, discovery). */
  setGauge(name: string, labels: Labels, value: number): void {
    this.gauge(name).set(labels, value);
    this.version++;
  }

  /** Adds to a self counter of the catalogue from outside the poller (0 exports it from 0). */
  incCounter(name: string, labels: Labels, by: number): void {
    this.counter(name).inc(labels, by);
    this.version++;
  }

  /** Withdraws one series of a self family (a discovery source that left the config). */
  removeSeries(name: string, labels: Labels): void {
    this.family(name).remove(labels);
    this.version++;
  }

  /** Upstream values refused by their family's range, per family (src/families/ranges.ts). */
  invalidValues(target: string, byFamily: ReadonlyMap<string, number>): void {
    const counter = this.counter('flussonic_exporter_invalid_values_total');
    for (const [family, n] of byFamily) counter.inc({ server: target, family }, n);
    this.version++;
  }

  /** Label values cut to max_label_value_bytes in one poll, per family (src/render/label-cap.ts). */
  labelValuesTruncated(target: string, byFamily: Readonly<Record<string, number>>): void {
    const counter = this.counter('flussonic_exporter_label_values_truncated_total');
    for (const [family, n] of Object.entries(byFamily)) counter.inc({ server: target, family }, n);
    this.version++;
  }

  /** Series of a whole family shed by a collector's max_series in one poll. */
  seriesShed(target: string, collector: string, family: string, count: number): void {
    if (count > 0) this.counter('flussonic_exporter_series_shed_total').inc({ server: target, collector, family }, count);
    this.version++;
  }

  /** A crashed worker thread was started again. */
  workerRestarted(): void {
    this.counter('flussonic_exporter_worker_restarts_total').inc({}, 1);
    this.version++;
  }

  /**
   * A poll of this target ended: whether it reached its deadline (exported from 0 at the first
   * poll). A server and a Catena service of one name share the series; it goes with the last of them.
   */
  pollEnded(kind: 'server' | 'catena', target: string, deadlineMissed: boolean): void {
    let kinds = this.deadlineKinds.get(target);
    if (!kinds) this.deadlineKinds.set(target, (kinds = new Set()));
    kinds.add(kind);
    this.counter('flussonic_exporter_poll_deadline_missed_total').inc({ server: target }, deadlineMissed ? 1 : 0);
    this.version++;
  }

  /**
   * One HTTP request answered. It does not mark the self-metrics changed: a scrape would then
   * never reuse a rendering (RENDER_REUSE_MS), and the count is at most that much behind.
   */
  httpRequest(path: string, code: number): void {
    this.counter('flussonic_exporter_http_requests_total').inc({ path, code: String(code) }, 1);
  }

  configReloaded(ok: boolean, nowSeconds: number): void {
    this.gauge('flussonic_exporter_config_last_reload_success').set({}, ok ? 1 : 0);
    if (ok) this.gauge('flussonic_exporter_config_last_reload_success_timestamp_seconds').set({}, nowSeconds);
    this.version++;
  }

  webConfigReloaded(ok: boolean, nowSeconds: number): void {
    this.gauge('flussonic_exporter_web_config_last_reload_success').set({}, ok ? 1 : 0);
    if (ok) this.gauge('flussonic_exporter_web_config_last_reload_success_timestamp_seconds').set({}, nowSeconds);
    this.version++;
  }

  /**
   * Withdraws every series of a target that left the config. A server and a Catena service may
   * share a name (each kind has its own name space), so the kind decides which series are whose:
   * a Catena service's are those labelled `catena=<name>`, or `server=<name>` with its collector
   * `operations` or endpoint `/operations`; a server's are the other `server=<name>` series.
   */
  removeTarget(kind: 'server' | 'catena', target: string): void {
    const seen = this.endpointsSeen.get(target);
    if (seen) for (const endpoint of [...seen]) if ((endpoint === CATENA_ENDPOINT) === (kind === 'catena')) seen.delete(endpoint);
    for (const family of this.families.values()) if (family.def.name !== DEADLINE_FAMILY) family.removeWhere((labels) => ownedBy(kind, target, labels));
    const kinds = this.deadlineKinds.get(target);
    kinds?.delete(kind);
    if (kinds?.size === 0) {
      this.deadlineKinds.delete(target);
      this.family(DEADLINE_FAMILY).remove({ server: target });
    }
    this.version++;
  }

  /**
   * The self-metrics in the text format, ending with a newline. A rendering is reused for up to
   * RENDER_REUSE_MS while no own series changed (concurrent scrapes share one).
   */
  render(): Promise<string> {
    this.eventLoop?.busy();
    const now = performance.now();
    const last = this.rendered;
    if (last && last.version === this.version && now - last.at < RENDER_REUSE_MS) return last.text;
    let own = '';
    for (const family of this.families.values()) own += family.render();
    // prom-client answers "\n" for an empty registry (no default metrics).
    const text = this.registry.metrics().then((t) => own + (t.trim() === '' ? '' : t.endsWith('\n') ? t : `${t}\n`));
    const rendered = { text, version: this.version, at: now };
    this.rendered = rendered;
    // A failed rendering is not reused.
    text.catch(() => {
      if (this.rendered === rendered) this.rendered = undefined;
    });
    return text;
  }

  private seeEndpoint(target: string, endpoint: string): void {
    let seen = this.endpointsSeen.get(target);
    if (!seen) this.endpointsSeen.set(target, (seen = new Set()));
    if (seen.has(endpoint)) return;
    seen.add(endpoint);
    const errors = this.counter('flussonic_exporter_api_errors_total');
    for (const reason of API_ERROR_REASONS) errors.inc({ server: target, endpoint, reason }, 0);
  }

  private register(def: FamilyDef): void {
    this.families.set(def.name, new OwnFamily(def));
  }

  private family(name: string): OwnFamily {
    const f = this.families.get(name);
    if (!f) throw new Error(`self-metric ${name} is not registered`);
    return f;
  }

  private gauge(name: string): OwnFamily {
    const f = this.family(name);
    if (f.def.type !== 'gauge') throw new Error(`self-metric ${name} is not a gauge`);
    return f;
  }

  private counter(name: string): OwnFamily {
    const f = this.family(name);
    if (f.def.type !== 'counter') throw new Error(`self-metric ${name} is not a counter`);
    return f;
  }
}

const DEADLINE_FAMILY = 'flussonic_exporter_poll_deadline_missed_total';
const CATENA_COLLECTOR = 'operations';
const CATENA_ENDPOINT = '/operations';

function ownedBy(kind: 'server' | 'catena', target: string, labels: Partial<Record<string, string | number>>): boolean {
  const catenaSide = labels.collector === CATENA_COLLECTOR || labels.endpoint === CATENA_ENDPOINT;
  if (kind === 'catena') return labels.catena === target || (labels.server === target && catenaSide);
  return labels.server === target && !catenaSide;
}
