/**
 * Runs the operations collector the way the poller does (a SeriesWriter with `catena` as its
 * constant label, an abort signal, a logger), against a simulator, and reads its output back.
 */
import type { CatenaConfig } from '../../src/config/types.js';
import { OperationsCollector, type OperationsCollectorDeps } from '../../src/collect/operations.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { SeriesWriter } from '../../src/render/series.js';
import type { RunningSimulator } from '@flussonic-exporter/simulator';
import { parseSamples, type Sample } from './exposition.js';
import { RecordedStats } from './recorded-stats.js';
import { captureLogger, type CapturedLog } from './runtime.js';

export class CollectorHarness {
  readonly collector: OperationsCollector;
  readonly stats = new RecordedStats();
  /** The exposition of the last successful poll (HELP/TYPE included). */
  text = '';

  constructor(
    readonly config: CatenaConfig,
    readonly sim: RunningSimulator,
    readonly log: CapturedLog = captureLogger(),
    extraDeps: Partial<OperationsCollectorDeps> = {},
  ) {
    this.collector = new OperationsCollector(config, { logger: log.logger, stats: this.stats, now: () => sim.now(), retryBackoffMs: 1, ...extraDeps });
  }

  /** One poll; on success its output becomes `text`, on failure the error is thrown and `text` stays. */
  async poll(): Promise<string> {
    const out = new SeriesWriter([['catena', this.config.name]]);
    await this.collector.collect({ signal: AbortSignal.timeout(10_000), log: this.log.logger.child({ catena: this.config.name }), out });
    const cache = new ExpositionCache();
    cache.swap(this.config.name, out.render());
    this.text = cache.current.text;
    return this.text;
  }

  samples(): Sample[] {
    return parseSamples(this.text);
  }

  close(): Promise<void> {
    return this.collector.close();
  }
}

/** `name{a="x",b="y"}` -> value, for comparing whole outputs. */
export function sampleMap(samples: readonly Sample[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    const labels = Object.keys(s.labels)
      .sort()
      .map((k) => `${k}=${JSON.stringify(s.labels[k])}`)
      .join(',');
    out.set(`${s.name}{${labels}}`, s.value);
  }
  return out;
}
