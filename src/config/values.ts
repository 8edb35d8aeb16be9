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
 * Why a metrics path is not one (also for --web.telemetry-path), or undefined; `reserved`: the
 * paths of other routes (a trailing slash is ignored when routing, so `/-/ready/` is taken too).
 */
export function metricsPathProblem(path: string, reserved: readonly string[], shown: string = JSON.stringify(path)): string | undefined {
  if (!/^\/[A-Za-z0-9._~\-/]+$/.test(path) || reserved.includes(path) || reserved.includes(path.replace(/(.)\/$/, '$1'))) return `must be a path like /metrics${reserved.length > 0 ? `, other than ${reserved.join(' ')}` : ''}; got ${shown}`;
  return undefined;
}

/** Deadline of a whole poll: below the interval, leaving a margin (min(0.9 x, x - 1 s), at least x / 2). */
export function pollDeadlineMs(intervalMs: number): number {
  return Math.max(Math.min(intervalMs * 0.9, intervalMs - 1000), intervalMs / 2);
}
