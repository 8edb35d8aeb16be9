/**
 * Timestamps of the operations log. `createdAt` is an ISO 8601 string; the exporter works in Unix
 * milliseconds. Parsing is explicit rather than Date.parse() because Date.parse reads a timestamp
 * without a zone designator as local time, which would make the exporter's counts depend on the
 * TZ of the host. Here a missing designator means UTC, and digits past milliseconds are cut off
 * (floor), so a bound built from a parsed time never excludes the record it came from.
 */

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

/** Unix ms of an ISO 8601 date-time, or undefined when the text is not one. */
export function parseIsoMs(text: string): number | undefined {
  const m = ISO_8601.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  let t = Date.UTC(Number(y), month - 1, day, hour, minute, second, ms);
  // Date.UTC rolls 2026-02-31 over into March: reject dates that do not exist.
  if (new Date(t).getUTCDate() !== day && second !== 60) return undefined;
  if (sign) {
    const offsetMin = Number(oh) * 60 + Number(om);
    if (Number(oh) > 23 || Number(om) > 59) return undefined;
    t -= (sign === '+' ? 1 : -1) * offsetMin * 60_000;
  }
  return Number.isFinite(t) ? t : undefined;
}

/** The ISO 8601 form (UTC, milliseconds) the exporter sends as a time bound. */
export function formatIsoMs(ms: number): string {
  return new Date(ms).toISOString();
}
