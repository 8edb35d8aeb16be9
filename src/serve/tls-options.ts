/**
 * The TLS settings of an exporter-toolkit web config, in Go's names, translated to Node's
 * (OpenSSL's) names. A name Go knows but Node cannot serve, or that Go itself rejects, is an
 * error that says so: a config is never accepted with a setting silently dropped.
 */

/** Go's crypto/tls names (tls.CipherSuites(), what promtool accepts) to OpenSSL's. */
const CIPHER_SUITES: Readonly<Record<string, string>> = Object.freeze({
  // TLS 1.3: OpenSSL uses the same names.
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
});

/** Go's tls.InsecureCipherSuites(): Go's own config loader refuses them, and so do we. */
const INSECURE_GO_SUITES = new Set([
  'TLS_RSA_WITH_RC4_128_SHA',
  'TLS_RSA_WITH_3DES_EDE_CBC_SHA',
  'TLS_RSA_WITH_AES_128_CBC_SHA256',
  'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA',
  'TLS_ECDHE_RSA_WITH_RC4_128_SHA',
  'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA',
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
]);

const CURVES: Readonly<Record<string, string>> = Object.freeze({
  CurveP256: 'P-256',
  CurveP384: 'P-384',
  CurveP521: 'P-521',
  X25519: 'X25519',
});

export type TlsVersionName = 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';

const VERSIONS: Readonly<Record<string, TlsVersionName>> = Object.freeze({ TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' });
const VERSION_ORDER: readonly TlsVersionName[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

/** exporter-toolkit's client_auth_type values (RequireClientCert is its old name of RequireAnyClientCert). */
export const CLIENT_AUTH_TYPES = ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'RequireClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'] as const;
export type ClientAuthType = 'NoClientCert' | 'RequestClientCert' | 'RequireAnyClientCert' | 'VerifyClientCertIfGiven' | 'RequireAndVerifyClientCert';

/** The OpenSSL cipher string of Go cipher suite names, or the problem with the first bad one. */
export function mapCipherSuites(names: readonly string[]): { ciphers: string } | { problem: string } {
  const out: string[] = [];
  for (const name of names) {
    const mapped = CIPHER_SUITES[name];
    if (mapped) {
      out.push(mapped);
      continue;
    }
    if (INSECURE_GO_SUITES.has(name)) return { problem: `${name} is an insecure cipher suite; Go's exporter-toolkit refuses it and so does this exporter` };
    return { problem: `unknown cipher suite ${JSON.stringify(name)}: expected Go's names, one of ${Object.keys(CIPHER_SUITES).join(', ')}` };
  }
  return { ciphers: out.join(':') };
}

export function mapCurves(names: readonly string[]): { ecdhCurve: string } | { problem: string } {
  const out: string[] = [];
  for (const name of names) {
    const mapped = CURVES[name];
    if (!mapped) return { problem: `unknown curve ${JSON.stringify(name)}: expected one of ${Object.keys(CURVES).join(', ')}` };
    out.push(mapped);
  }
  return { ecdhCurve: out.join(':') };
}

export function mapVersion(name: string): TlsVersionName | { problem: string } {
  return VERSIONS[name] ?? { problem: `unknown TLS version ${JSON.stringify(name)}: expected one of ${Object.keys(VERSIONS).join(', ')}` };
}

export function versionAtMost(a: TlsVersionName, b: TlsVersionName): boolean {
  return VERSION_ORDER.indexOf(a) <= VERSION_ORDER.indexOf(b);
}

export function normaliseClientAuth(name: string): ClientAuthType | { problem: string } {
  if (name === '' || name === 'NoClientCert') return 'NoClientCert';
  if (name === 'RequireClientCert') return 'RequireAnyClientCert';
  if ((CLIENT_AUTH_TYPES as readonly string[]).includes(name)) return name as ClientAuthType;
  return { problem: `unknown client_auth_type ${JSON.stringify(name)}: expected one of ${CLIENT_AUTH_TYPES.join(', ')}` };
}

/**
 * What a client_auth_type asks of one TLS connection, in Go's crypto/tls meaning. Node's
 * handshake takes `requestCert` (send a CertificateRequest) and `rejectUnauthorized` (fail the
 * handshake without a certificate, close it with one that client_ca_file does not verify);
 * `accepts` is checked once the handshake is done, for the modes OpenSSL cannot tell apart, and
 * keeps every mode's rule for a connection whose handshake began under another mode.
 */
export interface ClientAuthPolicy {
  readonly requestCert: boolean;
  readonly rejectUnauthorized: boolean;
  /** Whether a client that sent a certificate (`given`), verified or not, is let through. */
  accepts(given: boolean, verified: boolean): boolean;
}

const CLIENT_AUTH_POLICIES: Readonly<Record<ClientAuthType, ClientAuthPolicy>> = Object.freeze({
  NoClientCert: { requestCert: false, rejectUnauthorized: false, accepts: () => true },
  RequestClientCert: { requestCert: true, rejectUnauthorized: false, accepts: () => true },
  RequireAnyClientCert: { requestCert: true, rejectUnauthorized: false, accepts: (given: boolean) => given },
  VerifyClientCertIfGiven: { requestCert: true, rejectUnauthorized: false, accepts: (given: boolean, verified: boolean) => !given || verified },
  RequireAndVerifyClientCert: { requestCert: true, rejectUnauthorized: true, accepts: (given: boolean, verified: boolean) => given && verified },
});

export function clientAuthPolicy(mode: ClientAuthType): ClientAuthPolicy {
  return CLIENT_AUTH_POLICIES[mode];
}
