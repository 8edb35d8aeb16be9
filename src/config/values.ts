/**
 * Values of the config that need more than a type check: listen addresses, upstream URLs,
 * secrets (inline or from a file) and regexes.
 */
import { isAbsolute, resolve } from 'node:path';
import { DEFAULTS } from './defaults.js';
import { parseByteSize } from './duration.js';
import type { Section } from './fields.js';
import { MAX_SECRET_BYTES, readFileCapped } from './read-capped.js';
import { compileNamePattern, type NamePattern } from './regex.js';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * `HOST:PORT`, `:PORT` (every IPv4 interface) or `[IPv6]:PORT`. Returns the reason as a string
 * when the text is not one.
 */
export function parseListenAddress(text: string): ListenAddress | string {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(text.trim());
  if (!match) return `${JSON.stringify(text)} is not HOST:PORT (e.g. ":9228", "127.0.0.1:9228", "[::]:9228")`;
  const port = Number(match[3]);
  if (port > 65535) return `port ${port} is out of range (0-65535)`;
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? DEFAULTS.listenHostAny : host, port };
}

/**
 * An http(s) base URL without credentials, query or fragment, returned without a trailing slash.
 * The value itself never goes into a message: a mistyped URL may carry a password or a token.
 */
export function readBaseUrl(section: Section, key: string, credentialHint: string): string | undefined {
  const text = section.string(key, { required: true, secret: true });
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    section.report(key, 'not an http(s) URL');
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    section.report(key, `not an http(s) URL (scheme ${url.protocol.replace(/:$/, '')} is not supported)`);
    return undefined;
  }
  if (url.username !== '' || url.password !== '') {
    section.report(key, `must not contain credentials; use ${credentialHint}`);
    return undefined;
  }
  if (url.search !== '' || url.hash !== '') {
    section.report(key, 'must not have a query string or fragment');
    return undefined;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Where relative file paths in the config are resolved: the config file's directory. */
export interface FileContext {
  readonly baseDir: string;
}

/**
 * A secret given inline (`password`) or as a file (`password_file`; trailing newlines trimmed, so
 * `echo secret > file` works). Exactly one of the two may be set. Undefined when neither is.
 */
export function readSecret(section: Section, inlineKey: string, fileKey: string, files: FileContext): string | undefined {
  const inline = section.string(inlineKey, { secret: true });
  const filePath = section.string(fileKey);
  if (inline !== undefined && filePath !== undefined) {
    section.report(fileKey, `set either ${inlineKey} or ${fileKey}, not both`);
    return undefined;
  }
  let secret = inline;
  let where = inlineKey;
  if (filePath !== undefined) {
    where = fileKey;
    const path = isAbsolute(filePath) ? filePath : resolve(files.baseDir, filePath);
    const read = readFileCapped(path, MAX_SECRET_BYTES);
    if (!read.ok) {
      section.report(fileKey, `cannot read ${path} (${read.reason})`);
      return undefined;
    }
    secret = read.text.replace(/[\r\n]+$/, '');
    if (secret === '') {
      section.report(fileKey, `${path} is empty`);
      return undefined;
    }
  }
  if (secret !== undefined && /[\r\n\0]/.test(secret)) {
    section.report(where, 'must not contain line breaks or NUL characters');
    return undefined;
  }
  return secret;
}

/**
 * A regex matched against a whole name (anchored, like Prometheus relabelling), by RE2's rules
 * (see regex.ts): `edge-.*` matches `edge-1` but not `my-edge-1`.
 */
export function readNamePattern(section: Section, key: string): NamePattern | undefined {
  const source = section.string(key);
  if (source === undefined) return undefined;
  const re = compileNamePattern(source);
  if (typeof re === 'string') {
    section.report(key, `invalid regular expression: ${re}`);
    return undefined;
  }
  return { source };
}

/** The response body cap: a size like `64MiB`, at least 1KiB. */
export function readMaxResponseBytes(section: Section, fallback: number): number {
  if (!section.has('max_response_size')) return fallback;
  const value = section.value('max_response_size');
  const bytes = parseByteSize(value);
  if (bytes === undefined || bytes < 1024) {
    section.report('max_response_size', `${section.run.show(section.at('max_response_size'), value)} is not a size of at least 1KiB (e.g. 64MiB, 500KB, 1048576)`);
    return fallback;
  }
  return bytes;
}
