/** The valid ranges of the catalogue's families (src/families/ranges.ts) and the writer's check. */
import { describe, expect, it } from 'vitest';
import { CATALOGUE, familyByName } from '../../src/serve/catalogue.js';
import { inRange, TIMESTAMP_MIN_SECONDS } from '../../src/families/ranges.js';
import { SeriesWriter } from '../../src/render/series.js';

const now = Date.now() / 1000;
const ok = (family: string, v: number) => inRange(familyByName(family).range, v, now);

describe('value ranges', () => {
  it('every family has one, and none admits a negative value or NaN', () => {
    for (const f of CATALOGUE) {
      expect(f.range.min, f.name).toBeGreaterThanOrEqual(0);
      expect(inRange(f.range, -1, now), f.name).toBe(false);
      expect(inRange(f.range, Number.NaN, now), f.name).toBe(false);
    }
  });

  it.each([
    ['flussonic_server_cpu_usage_ratio', 0.14, true],
    ['flussonic_server_cpu_usage_ratio', 1.2, false],
    ['flussonic_server_bandwidth_usage_ratio', 1.2, true],
    ['flussonic_transcoder_device_temperature_celsius', 42, true],
    ['flussonic_transcoder_device_temperature_celsius', -42, false],
    ['flussonic_stream_received_bytes_total', 1e15, true],
    ['flussonic_stream_alive', 2, false],
    ['flussonic_server_start_time_seconds', TIMESTAMP_MIN_SECONDS - 1, false],
    ['flussonic_server_start_time_seconds', now - 3600, true],
    ['flussonic_catena_last_operation_timestamp_seconds', Date.UTC(2099, 0, 1) / 1000, false],
  ] as const)('%s %d -> %s', (family, v, expected) => {
    expect(ok(family, v)).toBe(expected);
  });

  it('the writer refuses out-of-range values, counts them per family and keeps the first examples; a 0 timestamp is absent', () => {
    const out = new SeriesWriter([['server', 'edge']]);
    out.add(familyByName('flussonic_server_cpu_usage_ratio'), [], -0.14);
    out.add(familyByName('flussonic_server_cpu_usage_ratio'), [], 0.5);
    out.add(familyByName('flussonic_stream_sent_bytes_total'), ['s1'], -10);
    out.add(familyByName('flussonic_stream_last_access_timestamp_seconds'), ['s1'], 0);
    expect(out.series).toBe(1);
    expect(out.checks.checked).toBe(3);
    expect(out.checks.invalid).toBe(2);
    expect(Object.fromEntries(out.checks.byFamily)).toEqual({ flussonic_server_cpu_usage_ratio: 1, flussonic_stream_sent_bytes_total: 1 });
    expect(out.checks.examples[1]).toEqual({ family: 'flussonic_stream_sent_bytes_total', labels: ['s1'], value: -10 });
    expect(out.checks.mostlyInvalid).toBe(false);
  });
});
