/**
 * Runs every discovery source on its own interval and keeps each one's last good list. A refresh
 * that fails keeps that list, is counted (flussonic_exporter_discovery_failures_total{source}) and
 * logged; a refresh whose list differs from the last calls `onChange`, and the target set is
 * rebuilt from lists() (src/fleet/fleet.ts). Sources know nothing of shards or pollers.
 */
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_MAX_DISCOVERED } from '../config/bounds.js';
import type { DiscoveryLimits, DiscoverySource, ServerSettings } from '../config/types.js';
import { fingerprint } from '../threads/target-descriptions.js';
import { readClusterPeers } from './cluster-peers.js';
import { filesSignature, matchFiles, readFileSd } from './file-sd.js';
import type { DiscoveredList, DiscoveredServer } from './discovery-types.js';

/** Where the refresher reports; SelfMetrics implements it (src/fleet/fleet.ts wires it). */
export interface DiscoveryReport {
  refreshed(source: string, ok: boolean, servers: number, nowSeconds: number): void;
  /** A list refused whole for its length (flussonic_exporter_discovery_refused_total{source,reason}). */
  refused(source: string, reason: RefusedReason): void;
  removed(source: string): void;
}

/** Why a list was refused: over its source's cap, or over the cap of all sources together. */
export type RefusedReason = 'source_cap' | 'total_cap';

export interface RefresherDeps {
  readonly log: Logger;
  readonly report: DiscoveryReport;
  readonly onChange: () => void;
  readonly userAgent?: string;
}

/** A file_sd change seen by a directory watch is read after this pause (editors write in steps). */
const WATCH_SETTLE_MS = 100;

export class DiscoveryRefresher {
  private runners = new Map<string, SourceRunner>();
  private started = false;
  private maxTotal = DEFAULT_MAX_DISCOVERED;
  private maxPerSource = DEFAULT_MAX_DISCOVERED;

  constructor(private readonly deps: RefresherDeps) {}

  /** Applies the configured sources: unchanged ones (same settings and template) keep their list. */
  configure(sources: readonly DiscoverySource[], templates: ReadonlyMap<string, ServerSettings>, limits?: DiscoveryLimits): void {
    this.maxTotal = limits?.maxTargets ?? DEFAULT_MAX_DISCOVERED;
    this.maxPerSource = limits?.maxTargetsPerSource ?? DEFAULT_MAX_DISCOVERED;
    const next = new Map<string, SourceRunner>();
    for (const source of sources) {
      const template = templates.get(source.template);
      if (!template) continue; // validation reports it; never reached with a loaded config
      const print = fingerprint({ source, template });
      const existing = this.runners.get(source.name);
      if (existing && existing.print === print) {
        next.set(source.name, existing);
        continue;
      }
      existing?.stop();
      const runner = new SourceRunner(source, template, print, this.deps, (asking) => this.roomFor(asking), () => this.maxPerSource);
      // A changed source keeps serving its last list until its first refresh: a reload that
      // touched a template must not withdraw every discovered server for a moment.
      if (existing) runner.servers = existing.servers;
      next.set(source.name, runner);
      if (this.started) runner.start();
    }
    for (const [name, runner] of this.runners) {
      if (next.has(name)) continue;
      runner.stop();
      this.deps.report.removed(name);
    }
    const changed = [...this.runners.keys()].some((name) => !next.has(name));
    this.runners = next;
    if (changed) this.deps.onChange();
  }

  start(): void {
    this.started = true;
    for (const runner of this.runners.values()) runner.start();
  }

  /** How many servers `asking` may list under discovery.max_targets, beside the other sources' lists. */
  private roomFor(asking: SourceRunner): number {
    let others = 0;
    for (const runner of this.runners.values()) if (runner !== asking) others += runner.servers.length;
    return this.maxTotal - others;
  }

  /** Every source's last good list, in configuration order. */
  lists(): DiscoveredList[] {
    return [...this.runners.values()].map((r) => ({ source: r.source.name, template: r.source.template, servers: r.servers }));
  }

  /** Refreshes every source now and awaits it (tests; the timers keep running). */
  async refreshNow(): Promise<void> {
    await Promise.all([...this.runners.values()].map((r) => r.refresh()));
  }

  stop(): void {
    this.started = false;
    for (const runner of this.runners.values()) runner.stop();
  }
}

class SourceRunner {
  servers: readonly DiscoveredServer[] = [];
  private listPrint = fingerprint([]);
  private timer: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  private watchers: FSWatcher[] = [];
  private controller: AbortController | undefined;
  private running: Promise<void> | undefined;
  private filesPrint: string | undefined;
  private stopped = false;

  constructor(
    readonly source: DiscoverySource,
    private readonly template: ServerSettings,
    readonly print: string,
    private readonly deps: RefresherDeps,
    private readonly room: (runner: SourceRunner) => number,
    private readonly perSource: () => number,
  ) {}

  start(): void {
    if (this.stopped || this.timer) return;
    this.loop();
    if (this.source.kind === 'file_sd') this.watchDirectories(this.source.files);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.settle);
    this.controller?.abort(new Error('discovery source stopped'));
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  /** One refresh; concurrent calls share it. */
  refresh(): Promise<void> {
    this.running ??= this.refreshOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private loop(): void {
    void this.refresh().then(() => {
      if (!this.stopped) {
        this.timer = setTimeout(() => this.loop(), this.source.refreshIntervalMs);
        this.timer.unref();
      }
    });
  }

  private watchDirectories(files: readonly string[]): void {
    for (const dir of new Set(files.map((f) => dirname(f)))) {
      try {
        const watcher = watch(dir, { persistent: false }, () => {
          clearTimeout(this.settle);
          this.settle = setTimeout(() => void this.refresh(), WATCH_SETTLE_MS);
          this.settle.unref();
        });
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // No watch (a missing directory, no inotify): the interval still re-reads.
      }
    }
  }

  private async refreshOnce(): Promise<void> {
    if (this.stopped) return;
    const { source, deps } = this;
    const controller = new AbortController();
    this.controller = controller;
    // A refresh never outlives its interval.
    const deadline = setTimeout(() => controller.abort(new Error('discovery refresh deadline reached')), Math.max(1000, source.refreshIntervalMs * 0.9));
    try {
      const servers = await this.read(controller.signal);
      if (this.stopped) return;
      if (servers !== undefined && this.refuses(servers.length)) return;
      if (servers !== undefined) {
        deps.report.refreshed(source.name, true, servers.length, Date.now() / 1000);
        const print = fingerprint(servers);
        if (print !== this.listPrint) {
          const before = new Set(this.servers.map((s) => s.name));
          const after = new Set(servers.map((s) => s.name));
          deps.log.info(
            { source: source.name, servers: servers.length, added: [...after].filter((n) => !before.has(n)).length, removed: [...before].filter((n) => !after.has(n)).length },
            'discovery found a changed list of servers',
          );
          this.servers = servers;
          this.listPrint = print;
          deps.onChange();
        }
      } else {
        deps.report.refreshed(source.name, true, this.servers.length, Date.now() / 1000);
      }
    } catch (error) {
      if (this.stopped) return;
      deps.report.refreshed(source.name, false, this.servers.length, Date.now() / 1000);
      deps.log.warn({ source: source.name, kept: this.servers.length }, `discovery refresh failed, the last good list is kept: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(deadline);
      this.controller = undefined;
    }
  }

  /**
   * Whether a list of `count` servers is over a cap: then it is refused whole (the last good list
   * stays), logged naming the setting, and counted. Nothing else changes: no server is added or
   * withdrawn, and the refresh is not a failure of the source.
   */
  private refuses(count: number): boolean {
    const { source, deps } = this;
    const cap = source.maxTargets ?? this.perSource();
    const room = this.room(this);
    let reason: RefusedReason | undefined;
    let message = '';
    if (count > cap) {
      reason = 'source_cap';
      message = `discovery source ${source.name} listed ${count} servers, over its cap of ${cap} (discovery.max_targets_per_source, or max_targets of the source): the list is refused and the last good list of ${this.servers.length} kept`;
    } else if (count > room) {
      reason = 'total_cap';
      message = `discovery source ${source.name} listed ${count} servers, which with the other sources' would pass discovery.max_targets (room for ${Math.max(0, room)}): the list is refused and the last good list of ${this.servers.length} kept`;
    }
    if (reason === undefined) return false;
    // A refused list is not kept: only its length was read.
    if (source.kind === 'file_sd') this.filesPrint = undefined;
    deps.report.refused(source.name, reason);
    deps.log.error({ source: source.name, servers: count, reason, kept: this.servers.length }, message);
    return true;
  }

  /** The source's servers now, or undefined when a file_sd source's files did not change. */
  private async read(signal: AbortSignal): Promise<DiscoveredServer[] | undefined> {
    const { source } = this;
    if (source.kind === 'cluster_peers') {
      return readClusterPeers(source, this.template, { log: this.deps.log, ...(this.deps.userAgent ? { userAgent: this.deps.userAgent } : {}) }, signal);
    }
    const files = await matchFiles(source);
    const print = await filesSignature(files, source);
    if (print === this.filesPrint) return undefined;
    const servers = await readFileSd(source, files);
    this.filesPrint = print;
    return servers;
  }
}
