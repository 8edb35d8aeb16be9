/**
 * Limits of the exporter's HTTP listeners: how long a client may take to send its request, how
 * long an idle keep-alive connection is kept, and how many connections may be open at once. The
 * defaults hold against idle and slowloris clients while leaving Prometheus' scrapes (one request
 * per interval on a kept-alive connection) untouched.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface HttpLimits {
  /** From accepting a connection (or the end of the previous request) until the request headers are complete. */
  readonly readHeaderTimeoutMs: number;
  /** How long a kept-alive connection may wait for its next request. */
  readonly idleTimeoutMs: number;
  /** Receiving a whole request, and the longest pause while the response is written. */
  readonly requestTimeoutMs: number;
  /** Open connections over all listen addresses; beyond it the longest-idle one is dropped, or the new one when none is idle. */
  readonly maxConnections: number;
  /** Concurrent requests of the metrics path; beyond it 503. */
  readonly maxRequests: number;
}

export const DEFAULT_LIMITS: HttpLimits = Object.freeze({
  readHeaderTimeoutMs: 10_000,
  // Above the common scrape intervals (15 s, 30 s, 60 s): Prometheus keeps its connection.
  idleTimeoutMs: 75_000,
  requestTimeoutMs: 60_000,
  // Prometheus' own --web.max-connections default.
  maxConnections: 512,
  // exporter-toolkit's and node_exporter's --web.max-requests default.
  maxRequests: 40,
});

/** The options of http(s).createServer that carry the limits. */
export function serverTimeouts(limits: HttpLimits): {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: limits.readHeaderTimeoutMs,
    requestTimeout: Math.max(limits.requestTimeoutMs, limits.readHeaderTimeoutMs),
    keepAliveTimeout: limits.idleTimeoutMs,
    // Node checks the header and request timeouts on an interval that wakes the process even with
    // no connection open (each wake costs a few hundred µs of CPU on a small VM). Once per shortest
    // timeout: a request's headers still trickling on a kept-alive connection are cut off within
    // twice the header timeout. A new connection's first request, the common slowloris, is cut
    // off at the header timeout itself by ConnectionGuard's own timer.
    connectionsCheckingInterval: Math.max(50, Math.min(limits.readHeaderTimeoutMs, limits.requestTimeoutMs)),
  };
}

/**
 * Why the guard closed a connection: `replaced` (the longest-idle one, to make room at the cap),
 * `refused` (a new one at the cap while every connection was busy), `header_timeout` (no complete
 * request headers within the header timeout).
 */
export const CONNECTION_DROP_REASONS = ['replaced', 'refused', 'header_timeout'] as const;
export type ConnectionDropReason = (typeof CONNECTION_DROP_REASONS)[number];

interface Tracked {
  /** Requests in flight on this connection. */
  busy: number;
  /** Closes a connection that has not finished a request's headers in time. */
  firstRequestTimer: NodeJS.Timeout | undefined;
}

/**
 * Counts the connections of every listener against one cap. Node's header timeout does not apply
 * to a connection that never sends a byte (or stalls in its TLS handshake), so each connection
 * must complete its first request's headers within the header timeout or is closed here.
 *
 * At the cap a new connection replaces the longest-idle one (no request in flight): a flood of
 * idle connections then cannot lock out a scrape. Only when every connection is busy is the new
 * one refused.
 */
export class ConnectionGuard {
  /** In order of last activity: the first entry is the longest idle. */
  private readonly open = new Map<Socket, Tracked>();
  private readonly drops: Record<ConnectionDropReason, number> = { replaced: 0, refused: 0, header_timeout: 0 };
  private closing = false;

  /** `onDrop` hears of every connection the guard closes (the self-metrics count them). */
  constructor(
    private readonly limits: HttpLimits,
    private readonly onDrop: (reason: ConnectionDropReason) => void = () => undefined,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** Connections refused or dropped to stay under the cap, since start. */
  get refused(): number {
    return this.drops.replaced + this.drops.refused;
  }

  /** Connections closed for this reason since start. */
  dropped(reason: ConnectionDropReason): number {
    return this.drops[reason];
  }

  private drop(reason: ConnectionDropReason): void {
    this.drops[reason] += 1;
    this.onDrop(reason);
  }

  /** Wires a server: its raw TCP connections (also under TLS) and its requests. */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.onConnection(socket));
    server.on('request', (req: { socket: Socket }, res: { once(event: 'close', fn: () => void): void }) => {
      const raw = rawSocket(req.socket);
      const entry = this.open.get(raw);
      if (!entry) return;
      if (entry.firstRequestTimer) {
        clearTimeout(entry.firstRequestTimer);
        entry.firstRequestTimer = undefined;
      }
      entry.busy += 1;
      this.touch(raw, entry);
      res.once('close', () => {
        entry.busy -= 1;
        if (!this.open.has(raw)) return;
        if (this.closing && entry.busy === 0) endSoon(req.socket);
        else this.touch(raw, entry);
      });
    });
  }

  /**
   * The servers are closing: each connection ends once its last request in flight is answered.
   * Node's `server.close()` only closes the connections idle at that moment, so one answering a
   * request then would otherwise stay kept alive, and hold the close, until its idle timeout.
   */
  closeAfterResponses(): void {
    this.closing = true;
  }

  private onConnection(socket: Socket): void {
    if (this.open.size >= this.limits.maxConnections && !this.dropIdle()) {
      this.drop('refused');
      socket.destroy();
      return;
    }
    const entry: Tracked = {
      busy: 0,
      firstRequestTimer: setTimeout(() => {
        this.drop('header_timeout');
        socket.destroy();
      }, this.limits.readHeaderTimeoutMs),
    };
    entry.firstRequestTimer!.unref();
    this.open.set(socket, entry);
    socket.once('close', () => {
      if (entry.firstRequestTimer) clearTimeout(entry.firstRequestTimer);
      this.open.delete(socket);
    });
  }

  private touch(socket: Socket, entry: Tracked): void {
    this.open.delete(socket);
    this.open.set(socket, entry);
  }

  /** Drops the longest-idle connection; false when every connection has a request in flight. */
  private dropIdle(): boolean {
    for (const [socket, entry] of this.open) {
      if (entry.busy > 0) continue;
      this.drop('replaced');
      this.open.delete(socket);
      if (entry.firstRequestTimer) clearTimeout(entry.firstRequestTimer);
      socket.destroy();
      return true;
    }
    return false;
  }
}

/** Ends a connection after what is queued on it is written (as Node ends a `Connection: close` one). */
function endSoon(socket: Socket): void {
  const soon = (socket as Socket & { destroySoon?: () => void }).destroySoon;
  if (typeof soon === 'function') soon.call(socket);
  else socket.end();
}

/** The TCP socket under a TLS socket (the one the server's `connection` event saw). */
export function rawSocket(socket: Socket): Socket {
  const parent = (socket as Socket & { _parent?: unknown })._parent;
  return parent && typeof parent === 'object' ? (parent as Socket) : socket;
}
