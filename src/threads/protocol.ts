/**
 * Every message between the main thread and a worker thread, both ways. The main thread decides
 * the set of targets and owns what outlives a worker (the exposition cache, the self-metrics'
 * running totals, the targets' statuses); a worker polls the targets it is given and hands each
 * poll's result over. Everything here is plain data (structured clone); the exposition's buffers
 * are transferred, not copied. Collectors, mappers and the catalogue know nothing of this file.
 */
import type { CatenaConfig, ExporterConfig, ServerConfig } from '../config/types.js';
import type { CollectorRun } from '../poll/poller.js';

/** A target as the main thread describes it: serialisable, built into a poll loop by the worker. */
export type TargetDescription =
  | { readonly kind: 'server'; readonly config: ServerConfig }
  | { readonly kind: 'catena'; readonly config: CatenaConfig };

/**
 * A target given to a worker. `id` is the main thread's generation of it: it changes when the
 * target's configuration does (all but its poll interval and timeout, which the running target
 * takes on: identityOf()), and results carrying an older id are ignored.
 */
export interface AssignedTarget {
  readonly id: number;
  readonly target: TargetDescription;
}

/** What a worker thread is started with (workerData). */
export interface WorkerSettings {
  readonly logLevel: ExporterConfig['logLevel'];
  readonly userAgent: string;
  /** This worker's share of max_connections (src/upstream/connections.ts). */
  readonly maxConnections?: number;
}

/** Main -> worker. */
export type ToWorker =
  /** The whole set of targets this worker owns now (added, changed and removed ones follow). */
  | { readonly type: 'apply'; readonly targets: readonly AssignedTarget[] }
  /** Start the poll loops. */
  | { readonly type: 'start' }
  /** Poll now (every target, or those named so) and answer `polled` with this id when done. */
  | { readonly type: 'poll'; readonly id: number; readonly name?: string }
  | { readonly type: 'log-level'; readonly level: ExporterConfig['logLevel'] }
  /**
   * Buffers of replaced expositions no response uses any more, transferred to be dropped here: a
   * worker collects often, so they are freed at its next minor collection (src/serve/reclaim.ts).
   */
  | { readonly type: 'free'; readonly buffers: readonly ArrayBuffer[] }
  /**
   * Render and deflate the poll a result announced as `held` (if it is still the target's latest),
   * answering `compressed` with this request number.
   */
  | { readonly type: 'compress'; readonly request: number; readonly held: number }
  /** Stop the loops, abort polls in flight, close the pools; answer `stopped`. */
  | { readonly type: 'stop' };

/** Upstream request accounting since the last report, per endpoint: added to running totals. */
export interface ApiCounts {
  /** [endpoint, HTTP code or error class, count] */
  readonly requests: readonly (readonly [string, string, number])[];
  /** [endpoint, reason, count] */
  readonly errors: readonly (readonly [string, string, number])[];
  /** [endpoint, bytes] */
  readonly bytes: readonly (readonly [string, number])[];
  /** [range, count]: connections refused by the address guard (discovered servers). */
  readonly refused?: readonly (readonly [string, number])[];
}

/** One family of a target's exposition: its deflated piece (src/render/gzip-stream.ts). */
export interface FamilyPiece {
  readonly family: string;
  readonly deflated: Uint8Array;
  readonly crc: number;
  readonly bytes: number;
  readonly shift: number;
}

export type { CollectorRun };

/** The outcome of one poll of one target. */
export interface PollResult {
  /** AssignedTarget.id of the target polled. */
  readonly id: number;
  readonly kind: TargetDescription['kind'];
  readonly name: string;
  readonly ok: boolean;
  /** The poll reached its deadline before every collector finished. */
  readonly deadlineMissed: boolean;
  /**
   * A good poll: the worker holds its samples under this number, rendered and deflated only when
   * asked (`compress`), so a poll nobody scrapes costs no writing and no compression.
   */
  readonly held?: number;
  /** After a failed poll: keep the last exposition (Catena's accumulated counters) or withdraw it. */
  readonly keepOnFailure: boolean;
  readonly collectors: readonly CollectorRun[];
  readonly api: ApiCounts;
  /** Unix ms when the poll ended. */
  readonly at: number;
  readonly durationMs: number;
  /** `collector: reason: message` of each failed collector. */
  readonly failures: readonly string[];
}

/** Worker -> main. */
export type FromWorker =
  | { readonly type: 'result'; readonly result: PollResult }
  | { readonly type: 'polled'; readonly id: number; readonly error?: string }
  /** The exposition asked for by `compress`; none when a newer poll (or the target's removal) replaced it. */
  | { readonly type: 'compressed'; readonly request: number; readonly exposition?: readonly FamilyPiece[] }
  /** One finished log line (JSON), written by the main thread's logger destination. */
  | { readonly type: 'log'; readonly line: string }
  | { readonly type: 'stopped' };

/** The transfer list of an exposition: its buffers move to the main thread, uncopied. */
export function transferList(exposition: readonly FamilyPiece[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const piece of exposition) {
    if (piece.deflated.buffer instanceof ArrayBuffer) out.add(piece.deflated.buffer);
  }
  return [...out];
}
