/**
 * A stream's counters across input switches, polled through the real client from the simulator:
 * before a failover to the backup input, during it, after the failback and once more. Flussonic's
 * stream counters (`stats.bytes_in` up to 24.x; in 2025 `stats.input`, whose `input_stats` counters
 * are the stream's over all its inputs: go-flussonic InputStats `bytes` "received by this stream
 * ... will sum all inputs", `input_switches` "Aggregated: how many times this stream has switched")
 * go on across a switch, while `inputs[i].stats` are each input's own. So every stream counter
 * series stays exported, never falls, and grows by exactly what the stream's inputs counted
 * between two polls (a failback must not add the primary's whole history).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '@flussonic-exporter/simulator';
import { pollStreams, sampleLines, SERVER } from './helpers.js';

const STREAM = 'fo';
/** The stream counters whose source is the stream, not one input. */
const STREAM_COUNTERS = ['flussonic_stream_received_bytes_total', 'flussonic_stream_input_errors_total', 'flussonic_stream_input_switches_total'];

interface Poll {
  readonly step: string;
  /** Series (name and labels) -> value, of STREAM_COUNTERS for the stream. */
  readonly counters: Map<string, number>;
  /** Each input's own counters as the simulator served them at this poll. */
  readonly inputs: readonly Record<string, number>[];
}

for (const shape of ['flat', 'nested'] as const) {
  describe(`stream counters across a failover and a failback (${shape} stats)`, () => {
    let sim: RunningSimulator;
    const polls: Poll[] = [];

    async function poll(step: string): Promise<void> {
      const text = await pollStreams(sim.url);
      const counters = new Map<string, number>();
      for (const line of sampleLines(text)) {
        const series = line.slice(0, line.lastIndexOf(' '));
        if (STREAM_COUNTERS.includes(series.slice(0, series.indexOf('{'))) && series.includes(`,stream="${STREAM}"`)) {
          counters.set(series, Number(line.slice(line.lastIndexOf(' ') + 1)));
        }
      }
      const doc = sim.world.streams.get(STREAM) as { inputs: { stats: Record<string, number> }[]; stats: { inputs?: Record<string, number>[] } };
      const inputs = shape === 'flat' ? doc.inputs.map((i) => i.stats) : doc.stats.inputs!;
      polls.push({ step, counters, inputs: structuredClone(inputs) });
    }

    const series = (family: string, error?: string) =>
      `${family}{server="${SERVER}",stream="${STREAM}"${error === undefined ? '' : `,error="${error}"`}}`;
    /** What the inputs' own counters of `field` grew by, all inputs together, from poll a to poll b. */
    const inputsGrowth = (a: Poll, b: Poll, field: string) => b.inputs.reduce((sum, input, i) => sum + (input[field] ?? 0) - (a.inputs[i]![field] ?? 0), 0);

    beforeAll(async () => {
      sim = await startSimulator({ streams: 3, sessions: 0, shape, seed: 11, clock: 'manual', churn: false });
      // Primary and backup of different protocols, so they count different kinds of input errors.
      sim.world.streams.put(STREAM, { inputs: [{ url: 'udp://239.0.0.9:1234' }, { url: 'hls://backup.example/fo/index.m3u8' }] });
      sim.advance(60_000);
      await poll('on the primary');
      sim.world.streams.addInputErrors(STREAM, 'lost_packets', 5);
      sim.world.streams.addInputErrors(STREAM, 'dropped_frames', 3);
      sim.world.streams.setFailover(STREAM, true);
      sim.advance(20_000);
      await poll('failed over to the backup');
      sim.world.streams.addInputErrors(STREAM, '404', 2);
      sim.world.streams.addInputErrors(STREAM, 'dropped_frames', 1);
      sim.advance(20_000);
      await poll('still on the backup');
      sim.world.streams.setFailover(STREAM, false);
      sim.advance(20_000);
      await poll('failed back to the primary');
      sim.world.streams.addInputErrors(STREAM, 'lost_packets', 1);
      sim.advance(20_000);
      await poll('on the primary again');
    });
    afterAll(() => sim?.close());

    it('the failover and the failback happened, with the backup receiving meanwhile', () => {
      const active = (p: Poll) => p.inputs.findIndex((input) => input.active);
      expect(polls.map(active)).toEqual([0, 1, 1, 0, 0]);
      expect(inputsGrowth(polls[1]!, polls[2]!, 'bytes')).toBeGreaterThan(0);
    });

    it('keeps every stream counter series and never lets one fall', () => {
      for (let k = 1; k < polls.length; k++) {
        const [before, after] = [polls[k - 1]!, polls[k]!];
        for (const [name, value] of before.counters) {
          expect(after.counters.get(name), `${name} from "${before.step}" to "${after.step}"`).toBeGreaterThanOrEqual(value);
        }
      }
    });

    it('grows the received bytes by what the inputs received between two polls, no more', () => {
      const received = series('flussonic_stream_received_bytes_total');
      for (let k = 1; k < polls.length; k++) {
        const [before, after] = [polls[k - 1]!, polls[k]!];
        expect(after.counters.get(received)! - before.counters.get(received)!, `"${before.step}" to "${after.step}"`).toBe(inputsGrowth(before, after, 'bytes'));
      }
    });

    // The 2025 shape only: registered for it alone, not skipped for the flat one.
    if (shape === 'nested') it('counts input errors of every input by kind, and each switch once (2025 shape)', () => {
      const errors = (p: Poll, kind: string) => p.counters.get(series('flussonic_stream_input_errors_total', kind));
      const switches = (p: Poll) => p.counters.get(series('flussonic_stream_input_switches_total'));
      expect(polls.map((p) => errors(p, 'lost_packets'))).toEqual([0, 5, 5, 5, 6]);
      expect(polls.map((p) => errors(p, 'dropped_frames'))).toEqual([0, 3, 4, 4, 4]);
      expect(polls.map((p) => errors(p, '404'))).toEqual([0, 0, 2, 2, 2]);
      expect(polls.map(switches)).toEqual([0, 1, 1, 2, 2]);
      for (let k = 1; k < polls.length; k++) {
        for (const kind of ['lost_packets', 'dropped_frames', '404']) {
          expect(errors(polls[k]!, kind)! - errors(polls[k - 1]!, kind)!).toBe(inputsGrowth(polls[k - 1]!, polls[k]!, `errors_${kind}`));
        }
      }
    });
  });
}
