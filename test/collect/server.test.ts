import { describe, expect, it } from 'vitest';
import { deviceMemoryToBytes, mapServerStats } from '../../src/collect/server.js';
import type { JsonObject } from '../../src/flussonic/api.js';
import type { SeriesWriter } from '../../src/render/series.js';
import {
  expectPromtoolClean,
  exposition,
  newWriter,
  readFixture,
  readGolden,
  sampleLines,
  stringsUnderKeys,
  withoutHelp,
} from './helpers.js';

const SAMPLE_2025 = readFixture('flussonic/2025-example-config_stats_get.json') as JsonObject;

function map(doc: JsonObject): { out: SeriesWriter; text: string; lines: string[] } {
  const out = newWriter();
  mapServerStats(out, doc);
  const text = exposition(out);
  return { out, text, lines: sampleLines(text) };
}

/** Synthetic devices (no captured GPU stats exist): one reporting MiB, one bytes, one CPU. */
const GPUS = [
  { id: 0, type: 'nvenc', name: 'Tesla T4', uuid: 'GPU-5fa1c7c2-3f0e-1b7a-9b1c-0d2c8e1f4a11', gpu_temp: 54, gpu_enc: 12, gpu_dec: 7, gpu_sm: 30, memTotal: 15360, memFree: 14000, memUsed: 1360 },
  { id: 1, type: 'nvenc', name: 'A2', gpu_temp: 61.5, memTotal: 16106127360, memFree: 8053063680, memUsed: 8053063680 },
  { id: 'auto', type: 'cpu', name: 'cpu' },
];

describe('server mapping: the 2025 example of GET /config/stats', () => {
  it('maps to the hand-checked golden exposition', () => {
    const { out, text } = map(SAMPLE_2025);
    expect(withoutHelp(text)).toBe(readGolden('server-2025-example.prom'));
    expect(out.problemCount).toBe(0);
  });

  it('never exports license_txt, the runtime id or config error details', () => {
    const { text } = map(SAMPLE_2025);
    const secrets = stringsUnderKeys(SAMPLE_2025, new Set(['license_txt', 'id', 'config_error', 'config_external_status', 'text_alerts']));
    expect(secrets).toEqual(expect.arrayContaining(['uO8v12HJhNXVj5gM', '61893b15-75b2-4fcb-b4cf-ae1dd0858ea2']));
    expect(secrets.filter((s) => s.length >= 8 && text.includes(s))).toEqual([]);
  });

  it('passes promtool check metrics', () => {
    expectPromtoolClean(map(SAMPLE_2025).text);
  });
});

describe('server mapping: transcoder devices', () => {
  const withGpus = { ...SAMPLE_2025, transcoder_devices: GPUS };

  it('maps GPU load, temperature and memory; memory below 1048576 is MiB, above is bytes', () => {
    const { out, lines, text } = map(withGpus);
    expect(out.problemCount).toBe(0);
    expect(lines.filter((l) => l.startsWith('flussonic_transcoder_device'))).toEqual([
      'flussonic_transcoder_device_info{server="edge-1",device="0",type="nvenc",name="Tesla T4",uuid="GPU-5fa1c7c2-3f0e-1b7a-9b1c-0d2c8e1f4a11"} 1',
      'flussonic_transcoder_device_info{server="edge-1",device="1",type="nvenc",name="A2",uuid=""} 1',
      'flussonic_transcoder_device_info{server="edge-1",device="auto",type="cpu",name="cpu",uuid=""} 1',
      'flussonic_transcoder_device_temperature_celsius{server="edge-1",device="0"} 54',
      'flussonic_transcoder_device_temperature_celsius{server="edge-1",device="1"} 61.5',
      'flussonic_transcoder_device_encoder_utilization_ratio{server="edge-1",device="0"} 0.12',
      'flussonic_transcoder_device_decoder_utilization_ratio{server="edge-1",device="0"} 0.07',
      'flussonic_transcoder_device_sm_utilization_ratio{server="edge-1",device="0"} 0.3',
      // 15360 MiB, 14000 MiB, 1360 MiB
      'flussonic_transcoder_device_memory_total_bytes{server="edge-1",device="0"} 16106127360',
      'flussonic_transcoder_device_memory_total_bytes{server="edge-1",device="1"} 16106127360',
      'flussonic_transcoder_device_memory_free_bytes{server="edge-1",device="0"} 14680064000',
      'flussonic_transcoder_device_memory_free_bytes{server="edge-1",device="1"} 8053063680',
      'flussonic_transcoder_device_memory_used_bytes{server="edge-1",device="0"} 1426063360',
      'flussonic_transcoder_device_memory_used_bytes{server="edge-1",device="1"} 8053063680',
    ]);
    expectPromtoolClean(text);
  });

  it('draws the MiB/bytes line at exactly 1048576', () => {
    expect(deviceMemoryToBytes(1048575)).toBe(1048575 * 1048576);
    expect(deviceMemoryToBytes(1048576)).toBe(1048576);
    expect(deviceMemoryToBytes(0)).toBe(0);
  });

  it('gives no device series, and no problem, for a server without transcoder_devices', () => {
    const { transcoder_devices: _, ...noDevices } = SAMPLE_2025 as Record<string, unknown>;
    const { out, lines } = map(noDevices);
    expect(lines.filter((l) => l.startsWith('flussonic_transcoder_device'))).toEqual([]);
    expect(lines.length).toBeGreaterThan(20);
    expect(out.problemCount).toBe(0);
  });

  it('keeps one series per device id when the upstream repeats one', () => {
    const { lines } = map({ transcoder_devices: [{ id: 3, type: 'nvenc', gpu_temp: 40 }, { id: 3, type: 'nvenc', gpu_temp: 90 }] });
    expect(lines.filter((l) => l.startsWith('flussonic_transcoder_device'))).toEqual([
      'flussonic_transcoder_device_info{server="edge-1",device="3",type="nvenc",name="",uuid=""} 1',
      'flussonic_transcoder_device_temperature_celsius{server="edge-1",device="3"} 40',
    ]);
  });
});

describe('server mapping: absent, null and wrongly typed values', () => {
  it('gives no sample for absent or null fields', () => {
    const { out, lines } = map({ server_version: '25.01', cpu_usage: null, events: null, partitions: null });
    expect(lines).toEqual(['flussonic_server_info{server="edge-1",version="25.01",build="",hostname="",license_type=""} 1']);
    expect(out.problemCount).toBe(0);
  });

  it('turns a string where a number belongs into a shape problem, not a sample', () => {
    const { out, lines } = map({ cpu_usage: '48', memory_usage: 27, partitions: [{ path: '/', device: 'sda1', total_mb: 'big', usage: 30 }] });
    expect(lines.filter((l) => l.includes('cpu_usage') || l.includes('partition_size'))).toEqual([]);
    expect(lines).toContain('flussonic_server_memory_usage_ratio{server="edge-1"} 0.27');
    expect(lines).toContain('flussonic_server_partition_usage_ratio{server="edge-1",path="/",device="sda1"} 0.3');
    expect(out.problems).toEqual([
      { family: 'flussonic_server_cpu_usage_ratio', labels: [], got: 'string "48"' },
      { family: 'flussonic_server_partition_size_bytes', labels: ['/', 'sda1'], got: 'string "big"' },
    ]);
  });

  it('exports a status it does not know as all zeros and reports it', () => {
    const { out, lines } = map({ streamer_status: 'upgrading' });
    expect(lines.filter((l) => l.startsWith('flussonic_server_status')).map((l) => l.endsWith(' 0'))).toEqual([true, true, true, true, true, true]);
    expect(out.problems).toEqual([{ family: 'flussonic_server_status', labels: [], got: 'string "upgrading"' }]);
  });

  it('reports partitions and devices of the wrong shape', () => {
    const { out } = map({ partitions: { sda1: {} }, transcoder_devices: ['gpu0'], events: 'none' });
    expect(out.problems.map((p) => `${p.family} ${p.got}`)).toEqual([
      'flussonic_server_events_resent_total string "none"',
      'flussonic_server_partition_size_bytes object',
      'flussonic_transcoder_device_info string "gpu0"',
    ]);
  });
});
