/**
 * `flussonic-exporter simulate ...`: run the simulator on its own (to build dashboards without a
 * Flussonic server). Prints the URLs it serves and runs until SIGINT/SIGTERM. Exit codes: 0 on a
 * clean stop, 2 for bad flags, 1 when it cannot start (e.g. the port is taken).
 */
import { parseArgs } from 'node:util';
import { FAULT_ENDPOINTS, parseFaultSpec, type Fault, type FaultEndpoint } from './faults.js';
import { PEERS_SHAPES, type PeersShape } from './cluster.js';
import { API_PREFIXES, OPERATIONS_PATH, startSimulator, type SimulatorOptions } from './index.js';

export const SIMULATE_USAGE = `Usage: flussonic-exporter simulate [flags]

Runs the embedded Flussonic Media Server API v3 and Catena operations-log simulator.

  --port N                 port to listen on (default 8080; 0 = any free port)
  --host HOST              address to listen on (default 127.0.0.1)
  --streams N              number of streams (default 20)
  --sessions N             target number of open sessions (default 200)
  --gpus N                 transcoder devices in /config/stats (default 1)
  --dvrs N                 DVR storages in /dvrs (default 1)
  --shape flat|nested      stream stats shape: 23.x/24.x (flat) or 2025 (nested); default flat
  --dvr-stats              DVR-level stats in /dvrs also in the flat shape
  --seed N                 random seed; the same seed gives the same world (default 1)
  --view-auth USER:PASS    require these credentials to read (view_auth)
  --edit-auth USER:PASS    require these credentials to change (edit_auth)
  --catena-key KEY:PORTAL  an operations-log API key and its portal (repeatable)
  --no-history             start the operations log empty (default: three days of history)
  --no-churn               no sessions opening/closing, no failures (counters still grow)
  --session-linger MS      keep closed sessions listed with closed_at for MS (default 0)
  --peer HOSTNAME=URL      a peer listed by GET /cluster/peers (repeatable; e.g. another simulator)
  --peers-shape 2025|23.05 shape of /cluster/peers (default 2025)
  --cluster-key KEY        cluster_key of every peer entry (a secret the exporter never passes on)
  --event-sink NAME=URL    post the server's events to URL (repeatable), e.g.
                           demo=http://user:secret@127.0.0.1:9228/events/demo; change it with
                           PUT /streamer/api/v3/event_sinks/NAME
  --fault ENDPOINT:SPEC    inject a fault, e.g. /sessions:latencyMs=200,errorRate=0.1 (repeatable)
                           endpoints: ${FAULT_ENDPOINTS.join(' ')}
                           faults: latencyMs=N errorRate=0..1 status=N malformedJson truncateBody
                                   hang repeatCursor oversizedBytes=N authReject
                                   afterFirstPage (the others hit only pages asked for with a cursor)
  --help                   this text
`;

export interface SimulateIo {
  stdout?: { write(text: string): unknown };
  stderr?: { write(text: string): unknown };
  /** Stops the simulator like SIGINT would (for tests). */
  stop?: AbortSignal;
}

class UsageError extends Error {}

function integer(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new UsageError(`--${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

function credentials(name: string, raw: string | undefined): { user: string; password: string } | undefined {
  if (raw === undefined) return undefined;
  const colon = raw.indexOf(':');
  if (colon <= 0) throw new UsageError(`--${name}: expected USER:PASSWORD`);
  return { user: raw.slice(0, colon), password: raw.slice(colon + 1) };
}

/** Turn the command line into simulator options (throws UsageError with a message for the user). */
export function parseSimulateArgs(argv: readonly string[]): { options: SimulatorOptions; faults: [FaultEndpoint, Fault][]; help: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        streams: { type: 'string' },
        sessions: { type: 'string' },
        gpus: { type: 'string' },
        dvrs: { type: 'string' },
        shape: { type: 'string' },
        'dvr-stats': { type: 'boolean' },
        seed: { type: 'string' },
        'view-auth': { type: 'string' },
        'edit-auth': { type: 'string' },
        'catena-key': { type: 'string', multiple: true },
        'no-history': { type: 'boolean' },
        'no-churn': { type: 'boolean' },
        'session-linger': { type: 'string' },
        fault: { type: 'string', multiple: true },
        peer: { type: 'string', multiple: true },
        'peers-shape': { type: 'string' },
        'cluster-key': { type: 'string' },
        'event-sink': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const v = parsed.values;
  if (v.shape !== undefined && v.shape !== 'flat' && v.shape !== 'nested') throw new UsageError(`--shape: expected flat or nested, got ${JSON.stringify(v.shape)}`);
  const catenaKeys = (v['catena-key'] ?? []).map((raw) => {
    const colon = raw.lastIndexOf(':');
    if (colon <= 0 || colon === raw.length - 1) throw new UsageError('--catena-key: expected KEY:PORTAL');
    return { key: raw.slice(0, colon), portal: raw.slice(colon + 1) };
  });
  const faults = (v.fault ?? []).map((raw): [FaultEndpoint, Fault] => {
    const colon = raw.indexOf(':');
    const endpoint = (colon < 0 ? raw : raw.slice(0, colon)) as FaultEndpoint;
    if (!FAULT_ENDPOINTS.includes(endpoint)) throw new UsageError(`--fault: unknown endpoint ${JSON.stringify(endpoint)}; known: ${FAULT_ENDPOINTS.join(' ')}`);
    try {
      return [endpoint, parseFaultSpec(colon < 0 ? '' : raw.slice(colon + 1))];
    } catch (e) {
      throw new UsageError(`--fault ${raw}: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
  const peers = (v.peer ?? []).map((raw) => {
    const eq = raw.indexOf('=');
    if (eq <= 0 || eq === raw.length - 1) throw new UsageError('--peer: expected HOSTNAME=URL');
    return { hostname: raw.slice(0, eq), apiUrl: raw.slice(eq + 1) };
  });
  const eventSinks = (v['event-sink'] ?? []).map((raw) => {
    const eq = raw.indexOf('=');
    if (eq <= 0 || eq === raw.length - 1) throw new UsageError('--event-sink: expected NAME=URL');
    return { name: raw.slice(0, eq), url: raw.slice(eq + 1) };
  });
  const peersShape = v['peers-shape'];
  if (peersShape !== undefined && !(PEERS_SHAPES as readonly string[]).includes(peersShape)) throw new UsageError(`--peers-shape: expected ${PEERS_SHAPES.join(' or ')}, got ${JSON.stringify(peersShape)}`);
  const seed = v.seed === undefined ? undefined : Number(v.seed);
  if (seed !== undefined && !Number.isSafeInteger(seed)) throw new UsageError(`--seed: expected an integer, got ${JSON.stringify(v.seed)}`);
  const options: SimulatorOptions = {
    port: integer('port', v.port, 0, 65535) ?? 8080,
    host: v.host ?? '127.0.0.1',
    streams: integer('streams', v.streams, 0, 1_000_000),
    sessions: integer('sessions', v.sessions, 0, 10_000_000),
    gpus: integer('gpus', v.gpus, 0, 64),
    dvrs: integer('dvrs', v.dvrs, 0, 1000),
    shape: v.shape as SimulatorOptions['shape'],
    seed,
    viewAuth: credentials('view-auth', v['view-auth']),
    editAuth: credentials('edit-auth', v['edit-auth']),
    catenaKeys,
    catenaHistory: !v['no-history'],
    churn: !v['no-churn'],
    sessionLingerMs: integer('session-linger', v['session-linger'], 0, 86_400_000),
    clock: 'real',
  };
  if (v['dvr-stats']) options.dvrStats = true;
  if (peers.length > 0) options.peers = peers;
  if (peersShape !== undefined) options.peersShape = peersShape as PeersShape;
  if (v['cluster-key'] !== undefined) options.clusterKey = v['cluster-key'];
  if (eventSinks.length > 0) options.eventSinks = eventSinks;
  for (const key of Object.keys(options) as (keyof SimulatorOptions)[]) if (options[key] === undefined) delete options[key];
  return { options, faults, help: v.help === true };
}

/** A URL as it may be printed: user and password left out. */
function withoutUserinfo(raw: string): string {
  try {
    const url = new URL(raw);
    const hadUserinfo = url.username !== '' || url.password !== '';
    url.username = '';
    url.password = '';
    return hadUserinfo ? `${url.href} (Basic credentials from the URL)` : url.href;
  } catch {
    return '(not a URL)';
  }
}

export async function runSimulate(argv: string[], io: SimulateIo = {}): Promise<number> {
  const out = io.stdout ?? process.stdout;
  const err = io.stderr ?? process.stderr;
  let parsed: ReturnType<typeof parseSimulateArgs>;
  try {
    parsed = parseSimulateArgs(argv);
  } catch (e) {
    err.write(`flussonic-exporter simulate: ${e instanceof Error ? e.message : String(e)}\nRun 'flussonic-exporter simulate --help' for the flags.\n`);
    return 2;
  }
  if (parsed.help) {
    out.write(SIMULATE_USAGE);
    return 0;
  }
  const { options, faults } = parsed;

  let sim;
  try {
    sim = await startSimulator(options);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? `${options.host}:${options.port} is already in use` : e instanceof Error ? e.message : String(e);
    err.write(`flussonic-exporter simulate: cannot start: ${reason}\n`);
    return e instanceof RangeError ? 2 : 1;
  }
  for (const [endpoint, fault] of faults) sim.faults.set(endpoint, fault);

  const lines = [
    `Flussonic API simulator (${options.shape ?? 'flat'} stats shape, seed ${options.seed ?? 1}) serving:`,
    `  media server API: ${sim.url}${API_PREFIXES[0]}  (also ${sim.url}${API_PREFIXES[1]})`,
  ];
  if (options.viewAuth || options.editAuth) {
    lines.push(`  auth: ${[options.viewAuth ? `view_auth user ${options.viewAuth.user}` : '', options.editAuth ? `edit_auth user ${options.editAuth.user}` : ''].filter(Boolean).join(', ')} (Basic or Bearer)`);
  }
  if (options.catenaKeys && options.catenaKeys.length > 0) {
    lines.push(`  operations log: ${sim.url}${OPERATIONS_PATH}  (header X-Auth-Token: the key given for each portal)`);
    for (const portal of [...new Set(options.catenaKeys.map((k) => k.portal))]) {
      const packages = sim.world.catena.packages(portal);
      lines.push(`    portal ${portal}: packages ${packages.map((p) => `${p.packageId} (${p.packageName})`).join(', ') || 'none yet'}`);
    }
  }
  lines.push(`  world: ${sim.world.streams.size} streams, ${sim.world.sessions.size} sessions, ${options.gpus ?? 1} GPUs, ${options.dvrs ?? 1} DVRs${options.churn === false ? ', no churn' : ''}`);
  for (const sink of options.eventSinks ?? []) lines.push(`  event sink ${sink.name}: posting events to ${withoutUserinfo(sink.url)}`);
  for (const [endpoint, fault] of faults) lines.push(`  fault on ${endpoint}: ${JSON.stringify(fault)}`);
  lines.push('Stop with Ctrl-C.');
  out.write(lines.join('\n') + '\n');

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.stop?.removeEventListener('abort', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (io.stop?.aborted) stop();
    else io.stop?.addEventListener('abort', stop, { once: true });
  });
  await sim.close();
  out.write('simulator stopped\n');
  return 0;
}
