/**
 * When a target is polled (src/poll/poller.ts runs the loops): the first poll soon after a start, the
 * next ones on the target's own phase of its interval, and the deadline a poll must end by.
 */
import { unitOf } from '../lib/hash.js';

/** Deadline of a whole poll (the config's default timeouts are below it). */
export { pollDeadlineMs } from '../config/values.js';

/**
 * When a target is polled and how long one of its requests may take (`poll_interval` and
 * `timeout`, whose default follows the interval): what a reload changes on a running target
 * without replacing it.
 */
export interface PollTiming {
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/** Delay of a target's first poll: a random phase up to a tenth of its interval, at most 2 s. */
export function firstPollDelayMs(intervalMs: number, random: () => number): number {
  return Math.floor(random() * Math.min(intervalMs / 10, 2000));
}

/**
 * Where in its interval a target is polled after its first poll: a fraction of the interval from
 * a hash of its key, the same in every process and replica (as Prometheus spreads its scrapes).
 * The first polls of all targets come within 2 s of a start, so that the exporter is soon ready;
 * kept at that rate, a fleet's polls would all run in those 2 s of every interval, each holding
 * its pages and samples at once (memory), competing for the cores (wall time against the
 * deadline, scrape latency), and idle for the rest. From the second poll on they are spread.
 */
export function pollPhaseMs(key: string, intervalMs: number): number {
  return Math.floor(unitOf(key) * intervalMs);
}

/**
 * The time (Unix ms) of a target's next poll after one that started at `startedAtMs`: the first
 * instant `phaseMs` into an interval that comes after half an interval. Polls on their phase stay
 * exactly one interval apart; the first poll, off its phase, is followed by one between half an
 * interval and one and a half later, and from then on they are on the phase.
 */
export function nextPollAtMs(startedAtMs: number, intervalMs: number, phaseMs: number): number {
  const after = startedAtMs + intervalMs / 2;
  const into = (((after - phaseMs) % intervalMs) + intervalMs) % intervalMs;
  return after - into + intervalMs;
}
