/**
 * Property test of the stream mapper: for any item of GET /streams, hostile ones included,
 * mapStream never throws and never exports a value outside its family's range.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapStream } from '../../src/collect/streams-map.js';
import type { JsonObject } from '../../src/flussonic/api.js';
import { CATALOGUE } from '../../src/serve/catalogue.js';
import { inRange } from '../../src/families/ranges.js';
import { parseSamples } from '../helpers/exposition.js';
import { ALL_FAMILIES, exposition, newWriter } from './helpers.js';

const STATS_FIELDS = [
  'alive', 'status', 'opened_at', 'last_access_at', 'publish_enabled', 'bitrate', 'input_bitrate', 'output_bitrate', 'out_bandwidth',
  'output_bandwidth', 'bytes_in', 'bytes_out', 'client_count', 'online_clients', 'retry_count', 'input_error_rate', 'ts_delay',
  'last_dts_at', 'backup_running', 'running_transcoder', 'transcoder_overloaded', 'transcoder', 'dvr_enabled', 'dvr_info',
  'dvr_replication', 'dvr_replication_running', 'media_info', 'push', 'input',
] as const;
const NESTED_FIELDS = ['bytes', 'errors_lost_packets', 'input_switches', 'error_rate', 'depth', 'tracks', 'track_id', 'content', 'codec', 'bitrate', 'fps', 'avg_fps', 'avg_gop', 'frames', 'restarts', 'qualities', 'hw', 'target', 'dup_frames_added', 'overlimit_frames_removed', 'retries', 'width', 'height'];

/** Numbers of every kind an upstream could send (JSON cannot carry NaN or Infinity, a bug could). */
const number = fc.oneof(fc.integer({ min: -1e15, max: 1e15 }), fc.double(), fc.constantFrom(0, -0, -1, 1e308, -1e308, 4102444800000, 2 ** 53));
const scalar = fc.oneof(number, fc.boolean(), fc.string({ maxLength: 12 }), fc.constant(null), fc.constantFrom('running', 'error', 'video', 'audio'));
const nested: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('object'), tie('array')),
  object: fc.dictionary(fc.constantFrom(...NESTED_FIELDS), tie('value'), { maxKeys: 6 }),
  array: fc.array(tie('value'), { maxLength: 4 }),
})).value;
const item: fc.Arbitrary<JsonObject> = fc.record({
  name: fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), scalar),
  title: fc.option(scalar, { nil: undefined }),
  stats: fc.oneof(fc.dictionary(fc.constantFrom(...STATS_FIELDS), fc.oneof(scalar, nested), { maxKeys: 12 }), scalar),
  pushes: fc.option(fc.array(nested, { maxLength: 3 }), { nil: undefined }),
}, { requiredKeys: ['name'] }) as fc.Arbitrary<JsonObject>;

const RANGES = new Map(CATALOGUE.map((f) => [f.name, f.range]));

describe('mapStream over arbitrary items', () => {
  it('never throws and never exports a value outside its family\'s range', () => {
    const now = Date.now() / 1000;
    fc.assert(
      fc.property(fc.array(item, { maxLength: 5 }), (items) => {
        const out = newWriter();
        for (const i of items) mapStream(out, i, { streams: {}, families: ALL_FAMILIES });
        for (const s of parseSamples(exposition(out))) {
          const range = RANGES.get(s.name);
          expect(range, s.name).toBeDefined();
          expect(inRange(range!, s.value, now), `${s.name} ${s.value}`).toBe(true);
        }
      }),
      { numRuns: 400, seed: 10 },
    );
  });
});
