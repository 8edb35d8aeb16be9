/**
 * Per-target scraping for fleets (served where the route table puts them):
 *  - `GET /probe?target=NAME`: one owned server's cached exposition and its `flussonic_up`, read
 *    from memory: a probe never polls. The target is looked up by name among the targets this
 *    replica owns; a URL, host:port or any unknown name is refused, so /probe can never be made to
 *    fetch anything (no SSRF).
 *  - `GET /sd`: Prometheus http_sd_configs JSON with the servers this replica owns, each pointing
 *    at this exporter's /probe (`__param_target`) and labelled `instance` and `server` = its name,
 *    so that Prometheus keeps one target, and one `up`, per server. `/sd?scrape=metrics` lists
 *    this replica's own /metrics instead, for a job that scrapes every replica whole.
 * The address in /sd is this replica's own: --web.external-address when given, else the local
 * address of the connection the request came in on. Never the request's Host header: a client
 * must not be able to point Prometheus somewhere else through a header it chose.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FleetView } from '../fleet/fleet.js';
import { familyByName } from './catalogue.js';
import { EMPTY_EXPOSITION as EMPTY, type ExpositionCache } from './exposition.js';
import { familyHeader } from '../render/family-state.js';
import { finalPiece } from '../render/gzip-stream.js';
import { escapeLabelValue } from '../render/series.js';
import type { TargetStatus } from '../poll/poller.js';
import { targetKey } from '../poll/poller.js';
import { acceptsGzip, sendExposition } from './exposition-reply.js';
import type { RouteHandler } from './route-types.js';
import { plainAnswer } from './plain-answer.js';

export interface FleetRouteDeps {
  readonly fleet: FleetView;
  readonly exposition: ExpositionCache;
  readonly metricsPath: string;
  readonly statuses: () => readonly TargetStatus[];
  /** HOST:PORT at which Prometheus reaches this replica (--web.external-address). */
  readonly externalAddress?: string;
}

/** Where the two routes are served (from the route table): each answer may name the other. */
export interface FleetPaths {
  readonly probe: string;
  readonly sd: string;
}

const UP_HEADER = familyHeader(familyByName('flussonic_up'));

export function probeHandler(deps: FleetRouteDeps, paths: FleetPaths): RouteHandler {
  return (request, reply) => probe(request, reply, deps, paths);
}

export function sdHandler(deps: FleetRouteDeps, paths: FleetPaths): RouteHandler {
  return (request, reply) => sd(request, reply, deps, paths);
}

function text(reply: FastifyReply, code: number, body: string): FastifyReply {
  return plainAnswer(reply.header('cache-control', 'no-store'), code, `${body}\n`);
}

async function probe(request: FastifyRequest, reply: FastifyReply, deps: FleetRouteDeps, paths: FleetPaths): Promise<FastifyReply> {
  const raw = (request.query as Record<string, unknown>).target;
  if (raw === undefined || raw === '') return text(reply, 400, `missing ?target=NAME (a server name; see ${paths.sd})`);
  if (typeof raw !== 'string') return text(reply, 400, 'give ?target= once');
  const owned = deps.fleet.owned().find((t) => t.kind === 'server' && t.name === raw);
  if (!owned) {
    // Never echo the value: it may be a URL with credentials someone tried.
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) || raw.includes('/') || raw.includes('@')) {
      return text(reply, 400, `target must be the name of a configured or discovered server; ${paths.probe} never fetches URLs`);
    }
    const { shard, totalShards } = deps.fleet.shard;
    const hint = totalShards > 1 ? ` (this replica is shard ${shard} of ${totalShards}; a server named so would belong to shard ${deps.fleet.shardOf(raw)})` : '';
    return text(reply, 404, `no server of that name is polled here${hint}`);
  }
  const status = deps.statuses().find((s) => s.kind === 'server' && s.name === owned.name);
  const up = status?.lastPoll?.ok === true ? 1 : 0;
  const upText = Buffer.from(`${UP_HEADER}flussonic_up{server="${escapeLabelValue(owned.name)}"} ${up}\n`, 'utf8');
  const key = targetKey('server', owned.name);
  if (up === 1) await deps.exposition.ready(key);
  const cached = up === 1 ? deps.exposition.targetBody(key) : undefined;
  return sendExposition(reply, cached ?? EMPTY, finalPiece(upText), acceptsGzip(request.headers['accept-encoding']));
}

/** This replica's address: the configured one, else the local address and port of the connection. */
function selfAddress(request: FastifyRequest, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const local = request.socket.localAddress ?? '127.0.0.1';
  const port = request.socket.localPort ?? 9228;
  // An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d.
  const address = local.startsWith('::ffff:') && local.includes('.') ? local.slice('::ffff:'.length) : local;
  return address.includes(':') ? `[${address.replace(/%.*$/, '')}]:${port}` : `${address}:${port}`;
}

function sd(request: FastifyRequest, reply: FastifyReply, deps: FleetRouteDeps, paths: FleetPaths): FastifyReply {
  const scrape = (request.query as Record<string, unknown>).scrape ?? 'probe';
  if (scrape !== 'probe' && scrape !== 'metrics') return text(reply, 400, 'scrape must be probe (default) or metrics');
  const address = selfAddress(request, deps.externalAddress);
  // Per server: `instance` is the server's name, so the targets of one replica (one address) stay
  // apart and each has its own `up`; `server` puts the name on `up` and scrape_* as on every other
  // series. The samples carry `server` already: the job sets honor_labels: true (docs/fleet.md), or
  // Prometheus keeps theirs as exported_server beside it. No shard label: it would change every
  // series' identity when the replica count changes.
  const groups =
    scrape === 'metrics'
      ? [{ targets: [address], labels: { __metrics_path__: deps.metricsPath } }]
      : deps.fleet
          .owned()
          .filter((t) => t.kind === 'server')
          .map((t) => ({
            targets: [address],
            labels: { ...t.labels, instance: t.name, server: t.name, __metrics_path__: paths.probe, __param_target: t.name },
          }));
  return reply.code(200).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(groups));
}
