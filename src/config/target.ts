/** What every polled target (Flussonic server or Catena service) has in common. */
import { pollDeadlineMs } from '../poll/schedule.js';
import { DEFAULTS } from './defaults.js';
import { formatDuration } from './duration.js';
import type { Section } from './fields.js';
import { readMaxResponseBytes } from './values.js';

/** The target's name: a label value and how logs refer to it. */
export function readName(section: Section): string {
  const name = section.string('name', { required: true });
  if (name === undefined) return '';
  if (name.length > 128 || /[\p{Cc}]/u.test(name)) {
    section.report('name', 'must be at most 128 characters without control characters');
  }
  return name;
}

/** How a target is polled and how much one poll may read: the same keys for both kinds. */
export interface PollSettings {
  readonly pollIntervalMs: number;
  readonly timeoutMs: number;
  readonly pageSize: number;
  readonly maxPages: number;
  readonly maxResponseBytes: number;
}

/**
 * `poll_interval`, `timeout` (below the interval), `page_size`, `max_pages` and
 * `max_response_size` of a target, with the kind's defaults (`pollIntervalMs` of the defaults is
 * the fallback interval: the global one for servers).
 */
export function readPollSettings(section: Section, defaults: PollSettings): PollSettings {
  const pollIntervalMs = section.duration('poll_interval', { minMs: DEFAULTS.minPollIntervalMs }) ?? defaults.pollIntervalMs;
  const explicit = section.duration('timeout', { minMs: 1 });
  const timeoutMs = explicit ?? defaultTimeoutMs(defaults.timeoutMs, pollIntervalMs);
  if (explicit !== undefined) checkTimeoutBelowInterval(section, explicit, pollIntervalMs);
  return {
    pollIntervalMs,
    timeoutMs,
    pageSize: section.int('page_size', defaults.pageSize, { min: 1, max: 100_000 }),
    maxPages: section.int('max_pages', defaults.maxPages, { min: 1, max: 1_000_000 }),
    maxResponseBytes: readMaxResponseBytes(section, defaults.maxResponseBytes),
  };
}

/**
 * The timeout when none is set: like Prometheus's min(scrape_timeout, scrape_interval), but
 * bounded by the poll's own deadline (below the interval, see pollDeadlineMs), so that a slow
 * request ends as a `timeout` of that request rather than as the whole poll running out.
 */
export function defaultTimeoutMs(defaultMs: number, pollIntervalMs: number): number {
  return Math.max(1, Math.floor(Math.min(defaultMs, pollDeadlineMs(pollIntervalMs))));
}

/** A request that may take longer than the interval would make polls pile up: only an explicit timeout is refused. */
function checkTimeoutBelowInterval(section: Section, timeoutMs: number, pollIntervalMs: number): void {
  if (timeoutMs < pollIntervalMs) return;
  section.report('timeout', `${formatDuration(timeoutMs)} must be below the poll interval (${formatDuration(pollIntervalMs)}); set a shorter timeout or a longer poll_interval (without timeout the default is min(10s, the poll deadline))`);
}
