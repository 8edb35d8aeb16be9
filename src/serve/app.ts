/**
 * The exporter's HTTP face, a fastify instance that never listens by itself (main.ts listens;
 * tests use app.inject()):
 *  - the metrics path: the cached upstream exposition followed by the self-metrics rendered now.
 *    With gzip, one gzip member: the upstream pieces deflated where they were polled, sent as they
 *    are, then the self-metrics as the final deflate block and the trailer (src/render/gzip-stream.ts);
 *  - `/` a landing page, `/-/healthy`, `/-/ready`;
 *  - guards.ts in front of every route: web config headers, basic auth, 405 for other methods
 *    than GET/HEAD on known paths, the cap of concurrent scrapes; 404 with a short body elsewhere.
 * Fastify logs through a child of the exporter's logger at warn level: no line per request.
 */
import { Readable } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { CONTENT_TYPE, type ExpositionCache } from './exposition.js';
import { finalPiece, type FinalPiece } from '../render/gzip-stream.js';
import { acceptsGzip, sendExposition } from './exposition-reply.js';
import type { SelfMetrics } from './self.js';
import type { TargetStatus } from '../poll/poller.js';
import type { FleetView } from '../fleet/fleet.js';
import { registerFleetRoutes } from './fleet-routes.js';
import { installGuards, type GuardOptions } from './guards.js';
import { DEFAULT_LIMITS } from './limits.js';
import { NO_WEB_CONFIG } from './web-config.js';

export interface AppDeps {
  readonly logger: Logger;
  readonly version: string;
  readonly metricsPath: string;
  readonly exposition: ExpositionCache;
  readonly self: SelfMetrics;
  /** The targets and their last poll, for the landing page. */
  readonly statuses: () => readonly TargetStatus[];
  /** Whether every target finished its first poll attempt. */
  readonly ready: () => boolean;
  /** Owned targets and shard, for /probe, /sd and the landing page (absent: no such routes). */
  readonly fleet?: FleetView;
  /** Web config (TLS is the listeners'; headers and auth are applied here) and the scrape cap. Default: none, 40. */
  readonly guards?: Omit<GuardOptions, 'metricsPath'>;
  /** Demo mode: the landing page says the data is simulated. */
  readonly demo?: boolean;
}

export const HEALTHY_PATH = '/-/healthy';
export const READY_PATH = '/-/ready';

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger.child({ component: 'http' }, { level: 'warn' }) as FastifyBaseLogger,
    // The metrics path is served as configured, also with a trailing slash.
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
  });
  // Before any route: the guards learn the known paths from the routes as they are added.
  installGuards(app, { webConfig: () => NO_WEB_CONFIG, maxRequests: DEFAULT_LIMITS.maxRequests, ...deps.guards, metricsPath: deps.metricsPath });

  const get = (path: string, handler: (reply: FastifyReply, acceptEncoding: string | undefined) => Promise<FastifyReply> | FastifyReply) => {
    app.get(path, (request, reply) => handler(reply, request.headers['accept-encoding']));
  };

  // The self-metrics rendering is shared by closely following scrapes (SelfMetrics.render); so is
  // its UTF-8 and its final deflate block.
  let selfEncoded: { readonly text: string; readonly bytes: Buffer; final?: FinalPiece } | undefined;
  const encodeSelf = (text: string) => {
    if (selfEncoded?.text !== text) selfEncoded = { text, bytes: Buffer.from(text, 'utf8') };
    return selfEncoded;
  };
  get(deps.metricsPath, async (reply, acceptEncoding) => {
    const selfText = await deps.self.render();
    const upstream = deps.exposition.snapshot();
    const self = encodeSelf(selfText);
    const final = (self.final ??= finalPiece(self.bytes));
    return sendExposition(reply, upstream, final, acceptsGzip(acceptEncoding));
  });

  if (deps.metricsPath !== '/') {
    get('/', (reply) =>
      reply
        .code(200)
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(landingPage(deps)),
    );
  }
  get(HEALTHY_PATH, (reply) => reply.code(200).type('text/plain; charset=utf-8').send('healthy\n'));
  get(READY_PATH, (reply) => {
    if (deps.ready()) return reply.code(200).type('text/plain; charset=utf-8').send('ready\n');
    const waiting = deps.statuses().filter((s) => !s.lastPoll).length;
    return reply.code(503).type('text/plain; charset=utf-8').send(`not ready: waiting for the first poll of ${waiting} target(s)\n`);
  });

  if (deps.fleet) registerFleetRoutes(app, { ...deps, fleet: deps.fleet });

  app.setNotFoundHandler((_request, reply) => reply.code(404).type('text/plain; charset=utf-8').send('not found\n'));
  app.setErrorHandler((error, _request, reply) => {
    // Log the error, not the request: URLs and headers stay out of the logs.
    app.log.error({ err: error }, 'request failed');
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    return reply.code(status >= 400 ? status : 500).type('text/plain; charset=utf-8').send(status < 500 ? 'bad request\n' : 'internal error\n');
  });
  return app;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function landingPage(deps: AppDeps): string {
  const rows = deps
    .statuses()
    .map((s) => {
      const poll = s.lastPoll;
      const result = poll ? (poll.ok ? 'ok' : 'failed') : 'not polled yet';
      const at = poll ? new Date(poll.at).toISOString() : '';
      const duration = poll ? `${(poll.durationMs / 1000).toFixed(3)} s` : '';
      const details = poll ? poll.failures.map((f) => `<div>${escapeHtml(f)}</div>`).join('') : '';
      return `<tr><td>${escapeHtml(s.kind)}</td><td>${escapeHtml(s.name)}</td><td>${(s.intervalMs / 1000).toString()} s</td><td class="${poll ? (poll.ok ? 'ok' : 'failed') : ''}">${result}</td><td>${at}</td><td>${duration}</td><td>${details}</td></tr>`;
    })
    .join('\n');
  const metrics = escapeHtml(deps.metricsPath);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Flussonic exporter</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}.ok{color:#070}.failed{color:#b00}</style>
</head>
<body>
<h1>Flussonic exporter</h1>
${deps.demo ? '<p class="failed"><strong>Demo mode: simulated data from an embedded simulator, not from a Flussonic server.</strong></p>\n' : ''}<p>Version ${escapeHtml(deps.version)}</p>
${deps.fleet ? `<p>${escapeHtml(deps.fleet.describe())}; <a href="/sd">/sd</a> lists them for Prometheus, <code>/probe?target=NAME</code> serves one</p>` : ''}
<ul>
<li><a href="${metrics}">Metrics</a> (${metrics})</li>
<li><a href="${HEALTHY_PATH}">Health</a></li>
<li><a href="${READY_PATH}">Readiness</a></li>
</ul>
<h2>Targets</h2>
<table>
<tr><th>Kind</th><th>Name</th><th>Interval</th><th>Last poll</th><th>At</th><th>Duration</th><th>Failures</th></tr>
${rows}
</table>
</body>
</html>
`;
}
