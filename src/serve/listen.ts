/**
 * The listening sockets: one HTTP or HTTPS server per listen address, all serving the same
 * Fastify handler under one set of limits. Whether TLS is on is decided at start by the web
 * config (as exporter-toolkit does); certificates, keys, client CAs and TLS settings follow the
 * web config's reloads without a restart (server.setSecureContext), and each new connection gets
 * the client certificate mode (client_auth_type) of the web config in force.
 *
 * Clients that break the protocol get the answers Go's net/http (and so exporter-toolkit) gives:
 * plain HTTP on the TLS port `400` "Client sent an HTTP request to an HTTPS server", request
 * headers over Node's limit (16 KiB) `431`; other malformed requests are closed.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { ListenAddress } from '../config/index.js';
import { ConnectionGuard, rawSocket, serverTimeouts, type ConnectionDropReason, type HttpLimits } from './limits.js';
import { clientAuthPolicy } from './tls-options.js';
import type { WebConfigSource } from './web-config-source.js';

export interface ListenOptions {
  /** Fastify's request handler (`app.routing`, after `app.ready()`). */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly addresses: readonly ListenAddress[];
  readonly limits: HttpLimits;
  readonly web: WebConfigSource;
  readonly log: Logger;
  /** Turns a listen error into the error to throw (main.ts: a one-line RuntimeFailure). */
  readonly onListenError: (address: ListenAddress, error: unknown) => Error;
  /** Hears of every connection the limits close (main.ts counts them). */
  readonly onConnectionDropped?: (reason: ConnectionDropReason) => void;
}

/** Go's net/http answer to plain HTTP on a TLS port, written in the clear. */
export const PLAIN_HTTP_ON_TLS_ANSWER = 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n';
const HEADERS_TOO_LARGE_ANSWER = 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 32\r\n\r\nrequest header fields too large\n';

export interface Listeners {
  readonly addresses: readonly AddressInfo[];
  readonly tls: boolean;
  readonly connections: ConnectionGuard;
  /** Stops accepting, closes idle connections, resolves when the running requests are answered. */
  close(): Promise<void>;
}

export async function startListeners(options: ListenOptions): Promise<Listeners> {
  const { limits, web, log } = options;
  const tls = web.tls;
  const guard = new ConnectionGuard(limits, options.onConnectionDropped);
  const servers: Server[] = [];
  const timeouts = serverTimeouts(limits);

  const make = (): Server => {
    const settings = web.current.tls;
    const server: Server = settings ? createHttpsServer({ ...settings.secureOptions, ...timeouts }, options.handler) : createHttpServer(timeouts, options.handler);
    // A response stalled (a client that stops reading) for this long is dropped.
    server.timeout = limits.requestTimeoutMs;
    guard.attach(server);
    if (settings) {
      // Node's own connection listener makes each connection's TLS socket from the server's
      // requestCert and rejectUnauthorized (setSecureContext leaves both alone); this one, ahead of
      // it, sets them from the client_auth_type in force.
      server.prependListener('connection', () => {
        const { requestCert, rejectUnauthorized } = clientAuthPolicy(web.current.tls?.clientAuth ?? 'NoClientCert');
        Object.assign(server, { requestCert, rejectUnauthorized });
      });
      server.on('secureConnection', (socket: TLSSocket) => checkClientCert(socket, web, log));
    }
    // A failed handshake (wrong client certificate, plain HTTP on the TLS port) is the client's
    // problem: debug, never an error line per probe. OpenSSL names plain HTTP (its first bytes are
    // "GET ", "POST", "HEAD" or "PUT "): that client is told in the clear, on the TCP socket under
    // the failed TLS one, as Go does.
    // First, before https' own listener hands the TLS socket to clientError (which closes it).
    server.prependListener('tlsClientError', (error: Error & { code?: string }, socket: Socket) => {
      log.debug({ reason: error.message }, 'TLS handshake failed');
      if (error.code !== 'ERR_SSL_HTTP_REQUEST') return;
      const raw = rawSocket(socket);
      if (raw.writable) raw.end(PLAIN_HTTP_ON_TLS_ANSWER);
    });
    server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
      // Node's own answer to oversized headers is 431 too, but only without a clientError listener.
      if (error.code === 'HPE_HEADER_OVERFLOW' && socket.writable) return void socket.end(HEADERS_TOO_LARGE_ANSWER);
      // Answered above in the clear; closing the TLS socket now would cut that answer off.
      if (error.code === 'ERR_SSL_HTTP_REQUEST') return;
      socket.destroy();
    });
    return server;
  };

  try {
    for (const address of options.addresses) {
      const server = make();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: address.host, port: address.port }, () => {
          server.off('error', reject);
          resolve();
        });
      }).catch((error: unknown) => {
        throw options.onListenError(address, error);
      });
    }
  } catch (error) {
    await closeAll(servers, guard);
    throw error;
  }

  // The source keeps TLS in the listeners' mode (web-config-source.ts): a reload brings new
  // certificates and settings, never a switch between HTTP and HTTPS.
  web.onChange((next) => {
    if (next.tls && tls) for (const server of servers) (server as unknown as { setSecureContext(o: object): void }).setSecureContext(next.tls.secureOptions);
  });

  const addresses = servers.map((s) => s.address() as AddressInfo);
  return {
    addresses,
    tls,
    connections: guard,
    close: () => closeAll(servers, guard),
  };
}

/**
 * After the handshake, the rule of the client_auth_type in force (tls-options.ts): for the modes
 * Node's handshake does not enforce by itself (RequireAnyClientCert wants a certificate, verified
 * or not; VerifyClientCertIfGiven wants a given one to verify), and for a connection whose
 * handshake began before a reload.
 */
function checkClientCert(socket: TLSSocket, web: WebConfigSource, log: Logger): void {
  const mode = web.current.tls?.clientAuth ?? 'NoClientCert';
  const cert = socket.getPeerCertificate();
  const given = cert !== null && typeof cert === 'object' && Object.keys(cert).length > 0;
  if (!clientAuthPolicy(mode).accepts(given, socket.authorized)) {
    log.debug({ mode }, 'client certificate refused');
    socket.destroy();
  }
}

async function closeAll(servers: readonly Server[], guard: ConnectionGuard): Promise<void> {
  guard.closeAfterResponses();
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          if (!server.listening) return resolve();
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
    ),
  );
}
