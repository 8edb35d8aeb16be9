/** What every polled target (Flussonic server or Catena service) has in common. */
import { formatDuration } from './duration.js';
import type { Section } from './fields.js';

/** The target's name: a label value and how logs refer to it. */
export function readName(section: Section): string {
  const name = section.string('name', { required: true });
  if (name === undefined) return '';
  if (name.length > 128 || /[\p{Cc}]/u.test(name)) {
    section.report('name', 'must be at most 128 characters without control characters');
  }
  return name;
}

/** A request that may take longer than the interval would make polls pile up. */
export function checkTimeoutBelowInterval(section: Section, timeoutMs: number, pollIntervalMs: number): void {
  if (timeoutMs < pollIntervalMs) return;
  const timeout = section.has('timeout') ? formatDuration(timeoutMs) : `the default ${formatDuration(timeoutMs)}`;
  section.report('timeout', `${timeout} must be below the poll interval (${formatDuration(pollIntervalMs)}); set a shorter timeout or a longer poll_interval`);
}
