/**
 * The exporter's own metrics, with prom-client on a Registry of their own (never the global
 * one, so two exporters in one process, as in tests, do not share counters): every family whose
 * owner is 'self' in the catalogue (names, HELP and labels from there), `flussonic_catena_up`,
 * and prom-client's default process/Node.js metrics. They are small and rendered per scrape,
 * after the cached upstream exposition.
 *
 * Self-metric series of a target carry its name in the `server` label (Catena targets too, with
 * collector `operations`), except `flussonic_catena_up{catena}`.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { ApiErrorReason } from '../errors.js';
import type { ApiStats } from '../flussonic/api.js';
import { familiesOf, familyByName, type FamilyDef } from './catalogue.js';

/** Every reason of flussonic_exporter_api_errors_total, exported from 0 once an endpoint is used. */
export const API_ERROR_REASONS: readonly ApiErrorReason[] = ['timeout', 'connection', 'http', 'invalid_json', 'too_large', 'cursor_loop', 'auth', 'shape'];

/**
 * Default metrics that are gauges named `_total`, which `promtool check metrics` rejects
 * ("non-counter metrics should not have _total suffix"); their per-type twins stay.
 */
const DEFAULT_METRICS_DROPPED = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

type Labels = Record<string, string>;

export interface SelfMetricsOptions {
  readonly version: string;
  /** Register prom-client's default process/nodejs metrics (default true). */
  readonly defaultMetrics?: boolean;
}

export class SelfMetrics {
  readonly registry = new Registry();
  private readonly gauges = new Map<string, Gauge>();
  private readonly counters = new Map<string, Counter>();
  /** Endpoints seen per target, to export each error reason from 0 once. */
  private readonly endpointsSeen = new Map<string, Set<string>>();

  constructor(options: SelfMetricsOptions) {
    for (const def of [...familiesOf('self'), familyByName('flussonic_catena_up')]) this.register(def);
    this.gauge('flussonic_exporter_build_info').set({ version: options.version, nodejs_version: process.versions.node }, 1);
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry });
      for (const name of DEFAULT_METRICS_DROPPED) this.registry.removeSingleMetric(name);
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
        requests.inc({ server: target, endpoint, code });
      },
      error: (endpoint, reason) => {
        this.seeEndpoint(target, endpoint);
        errors.inc({ server: target, endpoint, reason });
      },
      responseBytes: (endpoint, n) => bytes.inc({ server: target, endpoint }, n),
    };
  }

  setServerUp(server: string, up: boolean): void {
    this.gauge('flussonic_up').set({ server }, up ? 1 : 0);
  }

  setCatenaUp(catena: string, up: boolean): void {
    this.gauge('flussonic_catena_up').set({ catena }, up ? 1 : 0);
  }

  /** The outcome of one collector run: success, wall time, and the time of success. */
  collectorRun(target: string, collector: string, success: boolean, durationSeconds: number, nowSeconds: number): void {
    const labels = { server: target, collector };
    this.gauge('flussonic_exporter_collector_success').set(labels, success ? 1 : 0);
    this.gauge('flussonic_exporter_collector_duration_seconds').set(labels, durationSeconds);
    if (success) this.gauge('flussonic_exporter_last_success_timestamp_seconds').set(labels, nowSeconds);
    // Exported from 0, so that increase() sees the first drop.
    this.counter('flussonic_exporter_series_dropped_total').inc(labels, 0);
  }

  seriesDropped(target: string, collector: string, count: number): void {
    if (count > 0) this.counter('flussonic_exporter_series_dropped_total').inc({ server: target, collector }, count);
  }

  configReloaded(ok: boolean, nowSeconds: number): void {
    this.gauge('flussonic_exporter_config_last_reload_success').set(ok ? 1 : 0);
    if (ok) this.gauge('flussonic_exporter_config_last_reload_success_timestamp_seconds').set(nowSeconds);
  }

  /** Withdraws every series of a target that left the config (`server` or `catena` label). */
  async removeTarget(target: string): Promise<void> {
    this.endpointsSeen.delete(target);
    for (const metric of [...this.gauges.values(), ...this.counters.values()]) {
      const { values } = await metric.get();
      for (const { labels } of values) {
        if (labels.server === target || labels.catena === target) metric.remove(labels as Labels);
      }
    }
  }

  /** The self-metrics in the text format, ending with a newline. */
  async render(): Promise<string> {
    const text = await this.registry.metrics();
    return text.endsWith('\n') || text === '' ? text : `${text}\n`;
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
    const config = { name: def.name, help: def.help, labelNames: [...def.labels], registers: [this.registry] };
    if (def.type === 'gauge') this.gauges.set(def.name, new Gauge(config));
    else if (def.type === 'counter') this.counters.set(def.name, new Counter(config));
    else throw new Error(`self-metric ${def.name}: type ${def.type} is not supported here`);
  }

  private gauge(name: string): Gauge {
    const g = this.gauges.get(name);
    if (!g) throw new Error(`self-metric gauge ${name} is not registered`);
    return g;
  }

  private counter(name: string): Counter {
    const c = this.counters.get(name);
    if (!c) throw new Error(`self-metric counter ${name} is not registered`);
    return c;
  }
}
