/**
 * Demo mode (`--demo`, what `npm start` runs): the simulator on a loopback port and a config that
 * polls it as server `demo` and catena `demo`; and the `simulate` subcommand. Only main.ts imports
 * this module, and only for those two, so simulated data is never exported unasked.
 *
 * The simulator is its own package (packages/simulator), an optional dependency loaded here by
 * name: an install without it (npm ci --omit=optional, the Docker image) runs everything else.
 */
import { randomBytes } from 'node:crypto';
import { RuntimeFailure, type DemoShape } from './cli.js';
import { COLLECTOR_NAMES, STREAM_FAMILY_GROUPS, validateConfig, type ExporterConfig } from './config/index.js';

export const SIMULATOR_PACKAGE = '@flussonic-exporter/simulator';

/** Why `feature` cannot run when the simulator package does not load, and how to get it. */
function missingSimulator(feature: string, error: unknown): unknown {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== 'ERR_MODULE_NOT_FOUND') return error;
  return new RuntimeFailure(
    `${feature} needs the simulator, the optional package ${SIMULATOR_PACKAGE}, which is not installed or not built here ` +
      '(an install with --omit=optional and the Docker image leave it out): in a clone of the repository, `npm ci && npm run build` installs and builds it',
    { cause: error },
  );
}

async function loadSimulator(feature: string): Promise<typeof import('@flussonic-exporter/simulator')> {
  try {
    return await import('@flussonic-exporter/simulator');
  } catch (error) {
    throw missingSimulator(feature, error);
  }
}

/** `flussonic-exporter simulate ...`: the simulator's own command line; its exit code. */
export async function simulate(argv: readonly string[]): Promise<number> {
  let cli: typeof import('@flussonic-exporter/simulator/cli');
  try {
    cli = await import('@flussonic-exporter/simulator/cli');
  } catch (error) {
    throw missingSimulator('`simulate`', error);
  }
  return cli.runSimulate([...argv]);
}

export interface Demo {
  /** Validated like any config file. */
  readonly config: ExporterConfig;
  readonly simulatorUrl: string;
  /**
   * Point the simulator's event sink at the listener the exporter bound (`listeners.addresses[0]`,
   * `listeners.tls`); until then it posts to the demo config's listen address.
   */
  connectEvents(address: { readonly address: string; readonly port: number }, tls: boolean): void;
  close(): Promise<void>;
}

const everyOn = (names: readonly string[]): Record<string, true> => Object.fromEntries(names.map((name) => [name, true]));

/** Sizes that give every dashboard panel something to show while staying light on a laptop. */
const WORLD = { streams: 50, sessions: 1000, gpus: 2, dvrs: 2 } as const;
const PORTAL = 'demo';
const SERVER = 'demo';
const EVENT_SINK = 'exporter';
const DEMO_LISTEN = { address: '127.0.0.1', port: 9228 } as const;

/** The sink URL: the listener's address (a wildcard one as loopback), the secret as Basic userinfo. */
function eventSinkUrl(address: { readonly address: string; readonly port: number }, tls: boolean, secret: string): string {
  const host = address.address === '0.0.0.0' || address.address === '' ? '127.0.0.1' : address.address === '::' ? '[::1]' : address.address.includes(':') ? `[${address.address}]` : address.address;
  return `${tls ? 'https' : 'http'}://${SERVER}:${secret}@${host}:${address.port}/events/${SERVER}`;
}

/**
 * `shape` is the stream stats shape the simulator serves (--demo-shape): nested (2025, the default:
 * input errors and switches, transcoder stats, DVR storage stats) or flat (23.x/24.x: retry_count,
 * output_bitrate; no DVR storage stats in /dvrs, like those servers).
 *
 * `full` (--demo-full) turns every collector and family switch on, the full tour; without it the
 * demo server has the default settings, so the demo shows what a new config gets (the dashboards
 * say which switch each empty panel needs).
 */
export async function startDemo(shape: DemoShape = 'nested', full = false): Promise<Demo> {
  // A fresh key per run: the simulator listens on loopback only, but nothing guessable anyway.
  const { startSimulator } = await loadSimulator('--demo');
  const apiKey = randomBytes(16).toString('hex');
  // A fresh secret per run for the event sink: the exporter accepts the demo's events only with it.
  const eventsSecret = randomBytes(16).toString('hex');
  const sink = (address: { readonly address: string; readonly port: number }, tls: boolean) => ({ name: EVENT_SINK, url: eventSinkUrl(address, tls, eventsSecret), throttle_delay: 1, resend_timeout: 5 });
  const simulator = await startSimulator({
    ...WORLD,
    // DVR storage stats follow the shape (the simulator's default): only 2025 servers have them.
    shape,
    catenaKeys: [{ key: apiKey, portal: PORTAL }],
    host: '127.0.0.1',
    port: 0,
    eventSinks: [sink(DEMO_LISTEN, false)],
  });
  try {
    // Prices for two paid packages the simulator created, so the billed-amount counters move.
    const paid = simulator.world.catena.packages(PORTAL).filter((p) => p.packageName !== 'Basic').slice(0, 2);
    const prices = Object.fromEntries(paid.map((p, i) => [p.packageId, { amount: i === 0 ? 9.99 : 4.99, per: '30d', currency: 'EUR' }]));
    const config = validateConfig(
      {
        listen_address: `${DEMO_LISTEN.address}:${DEMO_LISTEN.port}`,
        poll_interval: '5s',
        servers: [
          {
            name: SERVER,
            url: simulator.url,
            timeout: '4s',
            events_secret: eventsSecret,
            // The full tour: every switch on, also those off by default, so every panel it can fill has data.
            ...(full ? { collectors: everyOn(COLLECTOR_NAMES), families: everyOn(STREAM_FAMILY_GROUPS) } : {}),
          },
        ],
        catena: [{ name: 'demo', url: simulator.url, api_key: apiKey, poll_interval: '15s', start: '24h', prices }],
        events: { enabled: true },
      },
      { source: 'demo config', baseDir: process.cwd() },
    );
    return {
      config,
      simulatorUrl: simulator.url,
      connectEvents(address, tls) {
        const { name, ...settings } = sink(address, tls);
        simulator.sinks.put(name, settings);
      },
      close: () => simulator.close(),
    };
  } catch (error) {
    await simulator.close();
    throw error;
  }
}
