/**
 * The targets as the main thread knows them: plain descriptions of the configured (or discovered)
 * servers and Catena services, and a fingerprint to tell whether one changed. What a worker makes
 * of a description (clients, collectors) is in src/poll/targets.ts, which the main thread loads only
 * with `workers: 0`: the HTTP clients cost the serving thread memory it does not otherwise need.
 */
import type { ExporterConfig } from '../config/types.js';
import type { TargetDescription } from './protocol.js';

/** One description per configured server and Catena service: the set of targets of a config. */
export function targetDescriptions(config: ExporterConfig): TargetDescription[] {
  return [
    ...config.servers.map((server) => ({ kind: 'server' as const, config: server })),
    ...config.catena.map((catena) => ({ kind: 'catena' as const, config: catena })),
  ];
}

/**
 * What a target is, less its timing (PollTiming: poll interval and request timeout): two
 * descriptions with the same identity are the same target, and a running one takes on a new
 * timing (src/poll/poller.ts) instead of being replaced, so its series, counters and state stay.
 */
export function identityOf(description: TargetDescription): string {
  return fingerprint({ ...description, config: { ...description.config, pollIntervalMs: undefined, timeoutMs: undefined } });
}

/** A stable text of a config object (Map included) to tell whether it changed. */
export function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Map) return [...v.entries()];
    if (v === Number.POSITIVE_INFINITY) return 'Infinity';
    return v;
  });
}
