/**
 * Web config test material: a CA, a server certificate and client certificates made with
 * openssl in a temporary directory, web config files written there (each remembered so a test
 * can run `promtool check web-config` on every one), and the exporter's HTTP app (buildApp, without
 * targets) served through the real listeners (startListeners) on a loopback port.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, afterEach } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { Agent, request } from 'undici';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/serve/app.js';
import { BasicAuthChecker } from '../../src/serve/basic-auth.js';
import { DEFAULT_LIMITS, type HttpLimits } from '../../src/serve/limits.js';
import { startListeners, type Listeners } from '../../src/serve/listen.js';
import { WebConfigSource } from '../../src/serve/web-config-source.js';
import { testAppDeps } from './app.js';
import { captureLogger, type CapturedLog } from './runtime.js';

const OPENSSL = '/usr/bin/openssl';

function openssl(dir: string, args: readonly string[]): void {
  const r = spawnSync(OPENSSL, args, { cwd: dir, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

export class WebDir {
  readonly dir = mkdtempSync(join(tmpdir(), 'fe-web-'));
  /** The text of every valid web config written (for promtool). */
  readonly validTexts: string[] = [];

  path(name: string): string {
    return join(this.dir, name);
  }

  write(name: string, text: string, valid = true): string {
    const path = this.path(name);
    writeFileSync(path, text);
    if (valid && !this.validTexts.includes(text)) this.validTexts.push(text);
    return path;
  }

  read(name: string): string {
    return readFileSync(this.path(name), 'utf8');
  }

  /** A self-signed server certificate for 127.0.0.1 and localhost: `<name>.pem`, `<name>.key`. */
  serverCert(name = 'server'): void {
    openssl(this.dir, ['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`, '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
  }

  /** A CA (`<ca>.pem`, `<ca>.key`) and a client certificate it signed (`<client>.pem`, `<client>.key`). */
  clientCert(ca: string, client: string): void {
    openssl(this.dir, ['req', '-x509', ...EC, '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2', '-subj', `/CN=${ca}`]);
    openssl(this.dir, ['req', ...EC, '-keyout', `${client}.key`, '-out', `${client}.csr`, '-subj', `/CN=${client}`]);
    openssl(this.dir, ['x509', '-req', '-in', `${client}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${client}.pem`, '-days', '2']);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A bcrypt hash at the lowest cost (fast tests; promtool accepts it). */
export function hash(password: string): string {
  return bcrypt.hashSync(password, 4);
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export interface Served {
  readonly app: FastifyInstance;
  readonly web: WebConfigSource;
  readonly listeners: Listeners;
  readonly log: CapturedLog;
  readonly auth: BasicAuthChecker;
  /** `http(s)://127.0.0.1:PORT` of the first listener. */
  readonly base: string;
  close(): Promise<void>;
}

/** The HTTP app without targets behind the real listeners, with a web config file and limits. */
export async function serve(options: { webConfigFile?: string; limits?: Partial<HttpLimits>; addresses?: number; healthWithoutAuth?: boolean } = {}): Promise<Served> {
  const log = captureLogger();
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const web = new WebConfigSource(options.webConfigFile, log.logger);
  const auth = new BasicAuthChecker();
  // The test defaults have no prom-client process figures: two scrapes answer the same bytes.
  const app = buildApp(
    testAppDeps({
      logger: log.logger,
      guards: { webConfig: () => web.current, maxRequests: limits.maxRequests, auth },
      ...(options.healthWithoutAuth ? { healthWithoutAuth: true } : {}),
    }),
  );
  await app.ready();
  const listeners = await startListeners({
    handler: app.routing,
    addresses: Array.from({ length: options.addresses ?? 1 }, () => ({ host: '127.0.0.1', port: 0 })),
    limits,
    web,
    log: log.logger,
    onListenError: (_a, e) => (e instanceof Error ? e : new Error(String(e))),
  });
  const base = `${listeners.tls ? 'https' : 'http'}://127.0.0.1:${listeners.addresses[0]!.port}`;
  return {
    app,
    web,
    listeners,
    log,
    auth,
    base,
    async close() {
      web.close();
      await Promise.all([listeners.close(), app.close()]);
    },
  };
}

/** A GET with undici through its own agent (TLS material as given), body read whole. */
export async function get(url: string, options: { authorization?: string; ca?: string; cert?: string; key?: string; method?: string } = {}) {
  const agent = new Agent({ connect: { ca: options.ca, cert: options.cert, key: options.key }, pipelining: 0 });
  try {
    const res = await request(url, {
      dispatcher: agent,
      method: (options.method ?? 'GET') as 'GET',
      headers: options.authorization ? { authorization: options.authorization } : {},
    });
    return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
  } finally {
    await agent.close();
  }
}

/**
 * A test file's web fixtures: a directory with a server certificate (`server.pem`/`server.key`),
 * removed after the file, and the list of apps to close after each test.
 */
export function webFixture(): { readonly dir: WebDir; readonly running: Served[] } {
  const dir = new WebDir();
  dir.serverCert('server');
  const running: Served[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.close()));
  });
  afterAll(() => dir.cleanup());
  return { dir, running };
}
