/** Paths of config values as users read them: `servers[1].url`, `catena[0].prices.pkg-basic.amount`. */

export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

export const formatPath = (segments: readonly PathSegment[]): string =>
  segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : !PLAIN_KEY.test(s) ? `[${JSON.stringify(s)}]` : i === 0 ? s : `.${s}`)).join('');
