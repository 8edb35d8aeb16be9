import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import type { FlussonicApi } from '../flussonic/api.js';
import type { SeriesWriter } from '../render/series.js';
import type { PollTiming } from '../poll/schedule.js';

/** What a collector gets for one poll. Only the poller builds it. */
export interface CollectContext {
  readonly client: FlussonicApi;
  readonly config: ServerConfig;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Where the samples of this poll go; `server` is already set as the first label. */
  readonly out: SeriesWriter;
}

/**
 * The collector found nothing of its kind on this server (no transcoder devices, no DVR stats):
 * logged at debug, not an error.
 */
export const NO_DATA = Symbol('no data');
export type CollectOutcome = void | typeof NO_DATA;

/**
 * One collector instance per server, created once, so a stateful collector (sessions) keeps its
 * state across polls. collect() throws on failure; a collector with state commits it only when the
 * poll succeeds, so a failed poll leaves counters as they were.
 */
export interface Collector {
  collect(ctx: CollectContext): Promise<CollectOutcome>;
}

export interface CollectorEntry {
  readonly name: 'streams' | 'sessions' | 'server' | 'dvrs' | 'cluster';
  readonly defaultEnabled: boolean;
  readonly create: (config: ServerConfig) => Collector;
}

/** What the operations collector of a Catena target gets for one poll. Only the poller builds it. */
export interface CatenaCollectContext {
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Where the samples of this poll go; `catena` is already set as the first label. */
  readonly out: SeriesWriter;
}

/**
 * One instance per Catena target, created once (it keeps its ledger across polls). collect()
 * throws an UpstreamError on failure and then changes nothing; close() releases its connections.
 */
export interface CatenaCollector {
  collect(ctx: CatenaCollectContext): Promise<void>;
  close(): Promise<void>;
  /** Takes on a reload's new request timeout (PollTiming); the ledger stays. */
  retime?(timing: PollTiming): void;
}
