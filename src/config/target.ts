/** What every polled target (Flussonic server or Catena service) has in common. */
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
  const timeoutMs = section.duration('timeout', { minMs: 1 }) ?? defaults.timeoutMs;
  checkTimeoutBelowInterval(section, timeoutMs, pollIntervalMs);
  return {
    pollIntervalMs,
    timeoutMs,
    pageSize: section.int('page_size', defaults.pageSize, { min: 1, max: 100_000 }),
    maxPages: section.int('max_pages', defaults.maxPages, { min: 1, max: 1_000_000 }),
    maxResponseBytes: readMaxResponseBytes(section, defaults.maxResponseBytes),
  };
}

/** A request that may take longer than the interval would make polls pile up. */
function checkTimeoutBelowInterval(section: Section, timeoutMs: number, pollIntervalMs: number): void {
  if (timeoutMs < pollIntervalMs) return;
  const timeout = section.has('timeout') ? formatDuration(timeoutMs) : `the default ${formatDuration(timeoutMs)}`;
  section.report('timeout', `${timeout} must be below the poll interval (${formatDuration(pollIntervalMs)}); set a shorter timeout or a longer poll_interval`);
}
