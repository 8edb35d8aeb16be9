/** What every discovery source produces: servers by name and URL, with optional target labels. */
import { MAX_NAME_LENGTH } from '../config/bounds.js';

export interface DiscoveredServer {
  /** The `server` label and the target name of /probe; unique and stable across refreshes. */
  readonly name: string;
  /** Base URL, http(s), without credentials (the source's template has them). */
  readonly url: string;
  /** Extra labels for /sd (file_sd `labels`); never credentials. */
  readonly labels: Readonly<Record<string, string>>;
}

/** A source's last good list, as the refresher hands it to the target set. */
export interface DiscoveredList {
  /** The source's `name` (the `source` label of the discovery self-metrics). */
  readonly source: string;
  readonly template: string;
  readonly servers: readonly DiscoveredServer[];
}

/** A refresh that failed; the message names the source and where, never a secret. */
export class DiscoveryError extends Error {
  override name = 'DiscoveryError';
}

/** A discovered name: 1..MAX_NAME_LENGTH characters without control characters (as `servers[].name`). */
export function validName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && name.length <= MAX_NAME_LENGTH && !/[\p{Cc}]/u.test(name);
}

/**
 * An http(s) base URL without credentials, query or fragment, normalised like the config's URLs,
 * or undefined. Never echoed by callers: it may carry a password.
 */
export function baseUrl(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
