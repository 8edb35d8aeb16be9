/** Values the config shares with the command line and the poller: listen addresses, the metrics path, the poll deadline. */

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** `[IPv6]:PORT` or `HOST:PORT` with a host that `host` (a regex) matches: the host and the port, or undefined. */
function hostPort(text: string, host: string): ListenAddress | undefined {
  const match = new RegExp(`^(?:\\[([0-9A-Fa-f:.]+)\\]|(${host})):(\\d{1,5})$`).exec(text.trim());
  return match ? { host: match[1] ?? match[2] ?? '', port: Number(match[3]) } : undefined;
}

/** `HOST:PORT`, `:PORT` (every IPv4 interface) or `[IPv6]:PORT`; the reason as a string when the text is not one. */
export function parseListenAddress(text: string): ListenAddress | string {
  const parsed = hostPort(text, '[^:[\\]\\s]*');
  if (!parsed) return `${JSON.stringify(text)} is not HOST:PORT (e.g. ":9228", "127.0.0.1:9228", "[::]:9228")`;
  if (parsed.port > 65535) return `port ${parsed.port} is out of range (0-65535)`;
  return { host: parsed.host === '' ? '0.0.0.0' : parsed.host, port: parsed.port };
}

/**
 * The address at which Prometheus reaches this exporter (--web.external-address): HOST:PORT with
 * a host (a DNS name, an IPv4 address or a bracketed IPv6 one) and a port; the text, or why not.
 */
export function parseExternalAddress(text: string): { readonly address: string } | string {
  const parsed = hostPort(text, '[A-Za-z0-9](?:[A-Za-z0-9.\\-_]*[A-Za-z0-9])?');
  const example = '(e.g. "flussonic-exporter-0.flussonic-exporter-headless:9228", "10.0.0.7:9228", "[fd00::7]:9228")';
  if (!parsed) return `${JSON.stringify(text)} is not HOST:PORT with a host name or address ${example}`;
  if (parsed.port < 1 || parsed.port > 65535) return `port ${parsed.port} is out of range (1-65535)`;
  if (parsed.host === '0.0.0.0' || /^[0:]+$/.test(parsed.host)) return `${parsed.host} is no address to scrape: name this replica's own address ${example}`;
  return { address: text.trim() };
}

/**
 * Why a metrics path is not one (also for --web.telemetry-path), or undefined. It must be one clean
 * absolute path, served and linked as it is written: `/` then segments of unreserved characters,
 * none empty, `.` or `..` (so no `//`, `?`, `#` or `%`), and a trailing `/` if it likes (the
 * router ignores one). `reserved`: the paths of
 * the other routes, as the router declares them (routePathMatches), none of which may match it.
 */
export function metricsPathProblem(path: string, reserved: readonly string[], shown: string = JSON.stringify(path)): string | undefined {
  const clean = /^(?:\/[A-Za-z0-9._~-]+)+\/?$/.test(path) && !path.split('/').some((segment) => segment === '.' || segment === '..');
  if (!clean) return `must be a path like /metrics: "/" then segments of letters, digits, "-", ".", "_" or "~", none empty, "." or "..", and an optional trailing "/"; got ${shown}`;
  const route = reserved.find((pattern) => routePathMatches(pattern, path));
  if (route !== undefined) return `must be a path like /metrics, other than ${reserved.join(' ')}; got ${shown}${route === path ? '' : `, which the route ${route} takes`}`;
  return undefined;
}

/**
 * Whether the route declared as `pattern` (static segments, and `:name` segments that take any one
 * segment, as fastify's router reads them) takes the clean path `path`. A trailing slash is
 * ignored when routing. Throws for any other pattern syntax (wildcards, regexps, several
 * parameters in a segment), which this check would not know how to match.
 */
export function routePathMatches(pattern: string, path: string): boolean {
  const split = (p: string) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p).split('/');
  const want = split(pattern);
  const got = split(path);
  for (const segment of want) {
    if (/[*(]/.test(segment) || (segment.includes(':') && !/^:[A-Za-z_][A-Za-z0-9_]*$/.test(segment))) throw new Error(`route path ${JSON.stringify(pattern)}: only static and whole-segment :name parts can be checked against the metrics path`);
  }
  return want.length === got.length && want.every((segment, i) => (segment.startsWith(':') ? got[i] !== '' : segment === got[i]));
}

/** Deadline of a whole poll: below the interval, leaving a margin (min(0.9 x, x - 1 s), at least x / 2). */
export function pollDeadlineMs(intervalMs: number): number {
  return Math.max(Math.min(intervalMs * 0.9, intervalMs - 1000), intervalMs / 2);
}
