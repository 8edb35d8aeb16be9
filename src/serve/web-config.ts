/**
 * The web config file (`--web.config.file`) in the Prometheus exporter-toolkit format: TLS
 * (`tls_server_config`), response headers and HTTP/2 (`http_server_config`) and basic auth users
 * with bcrypt hashes (`basic_auth_users`). Read strictly, as exporter-toolkit does: an unknown key,
 * a wrong type, an unreadable certificate or a value that is not a bcrypt hash is an error naming
 * the file, the key and the problem. Hashes and certificate contents never appear in messages.
 *
 * The keys are those of the exporter-toolkit that `promtool check web-config` knows; newer
 * toolkit keys (inline `cert`/`key`/`client_ca`, `client_allowed_sans`, `rate_limit`) are refused
 * by name, so every file this exporter accepts passes promtool too.
 */
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { parseDocument } from 'yaml';
import { duplicateKeys } from '../lib/yaml-doc.js';
import { readFileCapped } from '../lib/read-capped.js';
import { mapCipherSuites, mapCurves, mapVersion, normaliseClientAuth, versionAtMost, type ClientAuthType, type TlsVersionName } from './tls-options.js';

export interface TlsSettings {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile?: string;
  readonly clientAuth: ClientAuthType;
  readonly minVersion: TlsVersionName;
  readonly maxVersion: TlsVersionName;
  /** OpenSSL cipher string, when cipher_suites is set. */
  readonly ciphers?: string;
  readonly ecdhCurve?: string;
  readonly honorCipherOrder: boolean;
  /**
   * What tls.createSecureContext / server.setSecureContext take (files already read). The client
   * certificate mode is not among them: listen.ts applies `clientAuth` to each new connection.
   */
  readonly secureOptions: SecureContextOptions;
}

export interface WebConfig {
  /** Absent: plain HTTP. */
  readonly tls?: TlsSettings;
  /** Extra response headers (only the ones exporter-toolkit allows). */
  readonly headers: Readonly<Record<string, string>>;
  /** Accepted for compatibility; the exporter serves HTTP/1.1 only. */
  readonly http2: boolean;
  /** User name to bcrypt hash. Empty: no authentication. */
  readonly users: ReadonlyMap<string, string>;
  /** Every file this config was made from (watched for changes). */
  readonly files: readonly string[];
}

/** A web config that cannot be used: the file and each problem. */
export class WebConfigError extends Error {
  override name = 'WebConfigError';
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid web config ${file}: ${problems.join('; ')}`);
  }
}

/** An empty web config: plain HTTP, no authentication. */
export const NO_WEB_CONFIG: WebConfig = Object.freeze({ headers: {}, http2: true, users: new Map<string, string>(), files: [] });

/** Far above any real web config; a bigger file is a mistake, not something to parse. */
const MAX_FILE_BYTES = 1024 * 1024;
/** Certificates, keys and CA bundles. */
const MAX_PEM_BYTES = 4 * 1024 * 1024;

/** exporter-toolkit's allowed extra headers; a list restricts the value. */
const ALLOWED_HEADERS: Readonly<Record<string, readonly string[] | undefined>> = Object.freeze({
  'Strict-Transport-Security': undefined,
  'X-Content-Type-Options': ['nosniff'],
  'X-Frame-Options': ['deny', 'sameorigin'],
  'X-XSS-Protection': undefined,
  'Content-Security-Policy': undefined,
});

const KEYS = {
  top: ['tls_server_config', 'http_server_config', 'basic_auth_users'],
  tls: ['cert_file', 'key_file', 'client_auth_type', 'client_ca_file', 'cipher_suites', 'curve_preferences', 'min_version', 'max_version', 'prefer_server_cipher_suites'],
  http: ['http2', 'headers'],
} as const;
const NEWER_TOOLKIT_KEYS: Readonly<Record<string, string>> = { cert: 'cert_file', key: 'key_file', client_ca: 'client_ca_file', client_allowed_sans: '', rate_limit: '' };

/** A bcrypt hash as Go's and bcryptjs' implementations read it: `$2a$`, `$2b$` or `$2y$`, cost 04-31. */
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

/** Reads and validates the file; throws a WebConfigError listing every problem. */
export function loadWebConfig(file: string): WebConfig {
  const problems: string[] = [];
  const text = readLimited(file, MAX_FILE_BYTES, (p) => problems.push(p));
  if (text === undefined) throw new WebConfigError(file, problems);
  // Duplicate keys by the config loader's linear check (the library's compares every pair of keys).
  const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false });
  for (const e of doc.errors) problems.push(`YAML: ${e.message.split('\n')[0]}`);
  if (doc.errors.length === 0) for (const _ of duplicateKeys(doc)) problems.push('YAML: Map keys must be unique');
  if (problems.length > 0) throw new WebConfigError(file, problems);
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new WebConfigError(file, [`YAML: ${error instanceof Error ? error.message : String(error)}`]);
  }
  const config = readConfig(raw, dirname(resolve(file)), (p) => problems.push(p));
  if (problems.length > 0 || !config) throw new WebConfigError(file, problems);
  return { ...config, files: [resolve(file), ...config.files] };
}

type Report = (problem: string) => void;

function readConfig(raw: unknown, dir: string, report: Report): WebConfig | undefined {
  // An empty file (or only comments) is exporter-toolkit's "no TLS, no auth".
  if (raw === null || raw === undefined) return NO_WEB_CONFIG;
  const top = section(raw, '', KEYS.top, report);
  if (!top) return undefined;
  const http = section(top.http_server_config, 'http_server_config', KEYS.http, report) ?? {};
  const http2 = http.http2 === undefined || http.http2 === null ? true : http.http2;
  if (typeof http2 !== 'boolean') report('http_server_config.http2: expected true or false');
  const headers = readHeaders(http.headers, report);
  const users = readUsers(top.basic_auth_users, report);
  const tls = readTls(section(top.tls_server_config, 'tls_server_config', KEYS.tls, report) ?? {}, dir, report);
  return { headers, http2: http2 === true, users, ...(tls ? { tls } : {}), files: tls ? [tls.certFile, tls.keyFile, ...(tls.clientCaFile ? [tls.clientCaFile] : [])] : [] };
}

/** A mapping with known keys only; null and absent are an empty section. */
function section(raw: unknown, path: string, known: readonly string[], report: Report): Record<string, unknown> | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    report(`${path || 'the file'}: expected a mapping of keys`);
    return undefined;
  }
  const out = raw as Record<string, unknown>;
  for (const key of Object.keys(out)) {
    if (known.includes(key)) continue;
    const at = path ? `${path}.${key}` : key;
    if (key in NEWER_TOOLKIT_KEYS) {
      const instead = NEWER_TOOLKIT_KEYS[key];
      report(`${at}: a newer exporter-toolkit option this exporter does not support${instead ? ` (use ${instead})` : ''}`);
    } else {
      report(`${at}: unknown key (known here: ${known.join(', ')})`);
    }
  }
  return out;
}

function str(value: unknown, path: string, report: Report): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    report(`${path}: expected a string`);
    return undefined;
  }
  return value;
}

function strList(value: unknown, path: string, report: Report): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    report(`${path}: expected a list of strings`);
    return undefined;
  }
  return value as string[];
}

function readHeaders(raw: unknown, report: Report): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined || raw === null) return out;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    report('http_server_config.headers: expected a mapping of header names to values');
    return out;
  }
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const path = `http_server_config.headers.${name}`;
    if (!Object.hasOwn(ALLOWED_HEADERS, name)) {
      report(`${path}: this header cannot be configured (allowed: ${Object.keys(ALLOWED_HEADERS).join(', ')})`);
      continue;
    }
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
      report(`${path}: expected a one-line string`);
      continue;
    }
    const allowed = ALLOWED_HEADERS[name];
    if (allowed && !allowed.includes(value)) {
      report(`${path}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
      continue;
    }
    out[name] = value;
  }
  return out;
}

function readUsers(raw: unknown, report: Report): Map<string, string> {
  const users = new Map<string, string>();
  if (raw === undefined || raw === null) return users;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    report('basic_auth_users: expected a mapping of user names to bcrypt hashes');
    return users;
  }
  Object.entries(raw as Record<string, unknown>).forEach(([user, hash], index) => {
    // Users are named by position: a user name is half a credential and stays out of logs.
    if (typeof hash !== 'string' || !BCRYPT.test(hash)) {
      report(`basic_auth_users (user ${index + 1}): not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31; make one with htpasswd -nBC 10 USER)`);
    } else if (user === '' || user.includes(':')) {
      report(`basic_auth_users (user ${index + 1}): a user name must be non-empty and without ':'`);
    } else {
      users.set(user, hash);
    }
  });
  return users;
}

function readTls(s: Record<string, unknown>, dir: string, report: Report): TlsSettings | undefined {
  const P = 'tls_server_config';
  const certFile = str(s.cert_file, `${P}.cert_file`, report);
  const keyFile = str(s.key_file, `${P}.key_file`, report);
  const clientCaFile = str(s.client_ca_file, `${P}.client_ca_file`, report);
  const clientAuthName = str(s.client_auth_type, `${P}.client_auth_type`, report);
  // exporter-toolkit: TLS is on when any of these is set.
  if (!certFile && !keyFile && !clientCaFile && !clientAuthName) {
    for (const key of ['cipher_suites', 'curve_preferences', 'min_version', 'max_version']) {
      if (s[key] !== undefined && s[key] !== null) report(`${P}.${key}: has no effect without cert_file and key_file`);
    }
    return undefined;
  }
  if (!certFile) report(`${P}: cert_file is missing (TLS needs cert_file and key_file)`);
  if (!keyFile) report(`${P}: key_file is missing (TLS needs cert_file and key_file)`);
  const clientAuth = normaliseClientAuth(clientAuthName ?? '');
  if (typeof clientAuth !== 'string') report(`${P}.client_auth_type: ${clientAuth.problem}`);
  else if (clientCaFile && clientAuth === 'NoClientCert') report(`${P}.client_ca_file: set without client_auth_type (choose e.g. RequireAndVerifyClientCert)`);

  const version = (key: 'min_version' | 'max_version', fallback: TlsVersionName): TlsVersionName => {
    const name = str(s[key], `${P}.${key}`, report);
    if (name === undefined) return fallback;
    const v = mapVersion(name);
    if (typeof v !== 'string') {
      report(`${P}.${key}: ${v.problem}`);
      return fallback;
    }
    if (v === 'TLSv1' || v === 'TLSv1.1') {
      // Measured: Node's OpenSSL 3 fails every TLS 1.0/1.1 handshake at its default security level.
      report(`${P}.${key}: ${name} cannot be served by Node.js (OpenSSL 3 refuses TLS 1.0 and 1.1 handshakes); use TLS12 or TLS13`);
      return fallback;
    }
    return v;
  };
  const minVersion = version('min_version', 'TLSv1.2');
  const maxVersion = version('max_version', 'TLSv1.3');
  if (!versionAtMost(minVersion, maxVersion)) report(`${P}: min_version is above max_version`);
  const honor = s.prefer_server_cipher_suites ?? true;
  if (typeof honor !== 'boolean') report(`${P}.prefer_server_cipher_suites: expected true or false`);

  const suites = strList(s.cipher_suites, `${P}.cipher_suites`, report);
  const cipherResult = suites && suites.length > 0 ? mapCipherSuites(suites) : undefined;
  if (cipherResult && 'problem' in cipherResult) report(`${P}.cipher_suites: ${cipherResult.problem}`);
  const curves = strList(s.curve_preferences, `${P}.curve_preferences`, report);
  const curveResult = curves && curves.length > 0 ? mapCurves(curves) : undefined;
  if (curveResult && 'problem' in curveResult) report(`${P}.curve_preferences: ${curveResult.problem}`);
  if (!certFile || !keyFile || typeof clientAuth !== 'string') return undefined;

  const abs = (f: string) => resolve(dir, f);
  const cert = readLimited(abs(certFile), MAX_PEM_BYTES, (p) => report(`${P}.cert_file: ${p}`));
  const key = readLimited(abs(keyFile), MAX_PEM_BYTES, (p) => report(`${P}.key_file: ${p}`));
  const ca = clientCaFile ? readLimited(abs(clientCaFile), MAX_PEM_BYTES, (p) => report(`${P}.client_ca_file: ${p}`)) : undefined;
  if (cert === undefined || key === undefined || (clientCaFile && ca === undefined)) return undefined;
  const ciphers = cipherResult && 'ciphers' in cipherResult ? cipherResult.ciphers : undefined;
  const ecdhCurve = curveResult && 'ecdhCurve' in curveResult ? curveResult.ecdhCurve : undefined;
  const secureOptions = {
    cert,
    key,
    ...(ca !== undefined ? { ca } : {}),
    minVersion,
    maxVersion,
    ...(ciphers ? { ciphers } : {}),
    ...(ecdhCurve ? { ecdhCurve } : {}),
    honorCipherOrder: honor === true,
  };
  try {
    createSecureContext(secureOptions);
  } catch (error) {
    // OpenSSL's reason (key mismatch, not PEM, unsupported cipher): never the file's contents.
    report(`${P}: the certificate, key or settings cannot be used: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  return {
    certFile: abs(certFile),
    keyFile: abs(keyFile),
    ...(clientCaFile ? { clientCaFile: abs(clientCaFile) } : {}),
    clientAuth,
    minVersion,
    maxVersion,
    ...(ciphers ? { ciphers } : {}),
    ...(ecdhCurve ? { ecdhCurve } : {}),
    honorCipherOrder: honor === true,
    secureOptions,
  };
}

/**
 * A file's text, or a reported problem (missing, unreadable, over the size cap). Read with the
 * config's capped reader: at most the cap + 1 bytes, so a FIFO or /dev/zero cannot hang a reload.
 */
function readLimited(file: string, maxBytes: number, report: Report): string | undefined {
  const read = readFileCapped(file, maxBytes);
  if (read.ok) return read.text;
  if (read.reason.startsWith('larger than')) {
    // The size of a regular file, for the message; a device or FIFO has none worth showing.
    let size = 0;
    try {
      size = statSync(file).size;
    } catch {
      // gone meanwhile: the cap was exceeded all the same
    }
    report(`${file}: ${size > maxBytes ? size : `more than ${maxBytes}`} bytes, over the ${maxBytes}-byte limit`);
  }
  else report(`cannot read ${file}: ${read.reason === 'ENOENT' ? 'no such file' : read.reason === 'EACCES' ? 'permission denied' : read.reason}`);
  return undefined;
}
