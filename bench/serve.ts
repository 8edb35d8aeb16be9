/**
 * The whole-exporter side of the benchmark (exporter-child's serve role): the config of N targets
 * polling one simulator, and a logger that counts the poll loops' outcomes from the exporter's own
 * `poll finished` lines (worker threads' lines arrive through the main thread's destination).
 */
import pino, { type Logger } from 'pino';
import { DEFAULTS, type ExporterConfig } from '../src/config/index.js';
import { benchServerConfig, type LoopCounts } from './common.js';

export function serveConfig(request: { readonly url: string; readonly servers?: number; readonly intervalMs?: number }): ExporterConfig {
  const base = benchServerConfig(request.url);
  const timing = request.intervalMs === undefined ? {} : { pollIntervalMs: request.intervalMs, timeoutMs: Math.max(1000, request.intervalMs - 2000) };
  const servers = Array.from({ length: request.servers ?? 1 }, (_, i) => ({ ...base, ...timing, name: `edge-${i + 1}` }));
  return {
    listenAddress: { host: '127.0.0.1', port: 0 },
    metricsPath: '/metrics',
    logLevel: 'debug',
    pollIntervalMs: base.pollIntervalMs,
    workers: DEFAULTS.workers,
    servers,
    catena: [],
  };
}

export class LoopCounter {
  private polls = 0;
  private failed = 0;
  private deadline = 0;
  readonly logger: Logger = pino({ level: 'debug' }, { write: (line: string) => this.see(line) });

  counts(): LoopCounts {
    return { polls: this.polls, failed: this.failed, deadline: this.deadline };
  }

  private see(line: string): void {
    if (line.includes('"poll finished"')) {
      this.polls++;
      if (line.includes('"ok":false')) this.failed++;
    } else if (line.includes('"collector failed') && line.includes('"reason":"timeout"')) {
      this.deadline++;
    } else if (line.includes('"level":50') || line.includes('"level":60')) {
      process.stderr.write(line);
    }
  }
}
