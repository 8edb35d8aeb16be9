/**
 * Which resolved addresses a discovered server may be polled at. A discovery source names servers
 * by URL; a peer list or a target file that names 169.254.169.254 (a cloud metadata service) or
 * 127.0.0.1 would otherwise get the template's credentials. The check runs at connect time, after
 * name resolution (a DNS name that resolves to such an address is refused the same way), on the
 * address the socket would connect to. Statically configured servers are never checked: a
 * sidecar on 127.0.0.1 is a legitimate target.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';

/** The ranges refused: link-local always, loopback unless allowed (discovery.allow_loopback). */
export type RefusedRange = 'loopback' | 'link_local';

export interface AddressGuard {
  readonly allowLoopback: boolean;
}

/** A connection refused because of the address it would go to; its message names the setting. */
export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
  readonly code = 'ERR_ADDRESS_REFUSED';
  constructor(
    readonly address: string,
    readonly range: RefusedRange,
  ) {
    super(
      range === 'loopback'
        ? `address ${address} is loopback, refused for discovered servers (set discovery.allow_loopback: true to allow it)`
        : `address ${address} is link-local, refused for discovered servers`,
    );
  }
}

/** The refused range an IP address (v4 or v6) is in, or undefined when it may be polled. */
export function refusedRange(address: string, guard: AddressGuard): RefusedRange | undefined {
  const range = rangeOf(address);
  if (range === 'loopback' && guard.allowLoopback) return undefined;
  return range;
}

function rangeOf(address: string): RefusedRange | undefined {
  const kind = isIP(address);
  if (kind === 4) return rangeOfV4(address);
  if (kind !== 6) return undefined;
  const lower = address.toLowerCase().replace(/%.*$/, '');
  // IPv4-mapped, written dotted (::ffff:127.0.0.1) or in hex words (::ffff:7f00:1).
  const dotted = /^[0:]*:ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return rangeOfV4(dotted[1]!);
  const words = expandV6(lower);
  if (words === undefined) return undefined;
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return rangeOfV4(`${words[6]! >> 8}.${words[6]! & 0xff}.${words[7]! >> 8}.${words[7]! & 0xff}`);
  }
  if (words.slice(0, 7).every((w) => w === 0) && (words[7] === 1 || words[7] === 0)) return 'loopback';
  if ((words[0]! & 0xffc0) === 0xfe80) return 'link_local';
  return undefined;
}

function rangeOfV4(address: string): RefusedRange | undefined {
  const [a, b] = address.split('.').map(Number);
  if (a === 127 || a === 0) return 'loopback';
  if (a === 169 && b === 254) return 'link_local';
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (no zone, no embedded v4), or undefined. */
function expandV6(address: string): number[] | undefined {
  const plain = address;
  if (plain.includes('.')) return undefined;
  const [head, tail] = plain.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const words = [...left, ...Array<string>(Math.max(0, fill)).fill('0'), ...right].map((w) => Number.parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w)) ? words : undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect / tls.connect that resolves like dns.lookup and fails with an
 * AddressRefusedError when an address is in a refused range (every address, when all are asked).
 */
export function guardedLookup(guard: AddressGuard): (hostname: string, options: LookupOptions, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    dnsLookup(hostname, options, (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
      if (err) return callback(err, address, family);
      const addresses = typeof address === 'string' ? [address] : address.map((a) => a.address);
      for (const a of addresses) {
        const range = refusedRange(a, guard);
        if (range !== undefined) return callback(new AddressRefusedError(a, range) as unknown as NodeJS.ErrnoException, address, family);
      }
      callback(null, address, family);
    });
  };
}

/** The refused range of a connect target given as an IP literal (net.connect skips lookup for those). */
export function refusedLiteral(hostname: string, guard: AddressGuard): AddressRefusedError | undefined {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) === 0) return undefined;
  const range = refusedRange(host, guard);
  return range === undefined ? undefined : new AddressRefusedError(host, range);
}

/** The AddressRefusedError somewhere in an error's cause chain. */
export function addressRefusal(error: unknown): AddressRefusedError | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e !== undefined && e !== null; depth++) {
    if (e instanceof AddressRefusedError) return e;
    if (typeof e === 'object' && 'code' in e && (e as { code: unknown }).code === 'ERR_ADDRESS_REFUSED') return e as AddressRefusedError;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
