import { describe, expect, it } from 'vitest';
import { formatIsoMs, parseIsoMs } from '../../src/catena/time.js';

describe('createdAt timestamps', () => {
  it('reads UTC timestamps with and without milliseconds', () => {
    expect(parseIsoMs('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1));
    expect(parseIsoMs('2026-01-01T00:00:00.123Z')).toBe(Date.UTC(2026, 0, 1, 0, 0, 0, 123));
  });

  it('cuts digits past milliseconds off (floor), so a bound made from it includes the record', () => {
    expect(parseIsoMs('2026-01-01T00:00:00.123999Z')).toBe(Date.UTC(2026, 0, 1, 0, 0, 0, 123));
    expect(parseIsoMs('2026-01-01T00:00:00.5Z')).toBe(Date.UTC(2026, 0, 1, 0, 0, 0, 500));
  });

  it('applies a zone offset', () => {
    expect(parseIsoMs('2026-01-01T03:00:00+03:00')).toBe(Date.UTC(2026, 0, 1));
    expect(parseIsoMs('2025-12-31T19:30:00-0430')).toBe(Date.UTC(2026, 0, 1));
  });

  it('reads a timestamp without a zone as UTC, whatever the host time zone', () => {
    expect(parseIsoMs('2026-06-01T12:00:00')).toBe(Date.UTC(2026, 5, 1, 12));
  });

  it('rejects what is not an ISO 8601 date-time', () => {
    for (const bad of ['', 'yesterday', '2026-01-01', '1767225600000', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:00:00+25:00']) {
      expect(parseIsoMs(bad), bad).toBeUndefined();
    }
  });

  it('formats bounds as UTC ISO 8601 with milliseconds, read back to the same instant', () => {
    const t = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
    expect(formatIsoMs(t)).toBe('2026-01-02T03:04:05.006Z');
    expect(parseIsoMs(formatIsoMs(t))).toBe(t);
  });
});
