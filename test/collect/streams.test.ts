import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/flussonic/api.js';
import { mapStream } from '../../src/collect/streams-map.js';
import { streamsSelect, STREAMS_SELECT } from '../../src/collect/streams.js';
import { DEFAULTS as DEFAULTS_CONFIG } from '../../src/config/defaults.js';
import { FAMILY_TIERS } from '../../src/serve/catalogue.js';
import { STREAM_FAMILY_GROUPS } from '../../src/config/switches.js';
import { CATALOGUE } from '../../src/serve/catalogue.js';
import type { SeriesWriter } from '../../src/render/series.js';
import { SAMPLES_2021, sharedFile } from '../helpers/shared.js';
import {
  ALL_FAMILIES,
  ALL_ON,
  applySelect,
  expectPromtoolClean,
  exposition,
  NO_FILTER,
  newWriter,
  readFixture,
  readGolden,
  readJson,
  mapStreams,
  sampleLines,
  stringsUnderKeys,
  withoutHelp,
  type StreamConfig,
} from './helpers.js';

const DEFAULTS = ALL_ON;

const SAMPLE_2021_SUBSET = readFixture('flussonic/2021-runtime-streams-c01-c04-c09.json') as JsonObject[];
const SAMPLE_2025 = (readFixture('flussonic/2025-example-streams_list.json') as { streams: JsonObject[] }).streams;

const mapAll = mapStreams;

/** One stream with the given stats, rendered; for the behaviours the samples do not show. */
function mapOne(stats: Record<string, unknown>, extra: Record<string, unknown> = {}, config: StreamConfig = DEFAULTS) {
  const out = mapAll([{ name: 'live/one', stats, ...extra }], config);
  return { out, lines: sampleLines(exposition(out)) };
}

/** Keys whose values (at any depth) must never reach /metrics: URLs, addresses, secrets, runtime ids. */
const FORBIDDEN_KEYS = new Set([
  'url', 'urls', 'ip', 'id', 'source_id', 'server_id', 'user_agent', 'password', 'passphrase', 'headers',
  'cluster_key', 'source_hostname', 'running_on', 'keyserver', 'copy', 'jpeg_snapshot_sign_key', 'streamid',
  'on_play', 'on_publish', 'referer', 'token',
]);

function expectNoForbiddenValues(sample: unknown, text: string): void {
  // Short placeholders ("example", the 2025 stream's own name) cannot be told apart from labels.
  const forbidden = stringsUnderKeys(sample, FORBIDDEN_KEYS).filter((s) => s.length >= 8);
  expect(forbidden.length).toBeGreaterThan(3);
  const leaked = forbidden.filter((s) => text.includes(s));
  expect(leaked).toEqual([]);
}

describe('streams mapping: the 2021 runtime sample (flat stats)', () => {
  it('maps c/01, c/04 and c/09 to the hand-checked golden exposition', () => {
    const out = mapAll(SAMPLE_2021_SUBSET);
    expect(withoutHelp(exposition(out))).toBe(readGolden('streams-2021-runtime-c01-c04-c09.prom'));
    expect(out.problemCount).toBe(0);
  });

  it('gives no clients sample for c/09, whose client_count is null', () => {
    const lines = sampleLines(exposition(mapAll(SAMPLE_2021_SUBSET)));
    expect(lines.filter((l) => l.startsWith('flussonic_stream_clients{')).map((l) => l.split(' ')[0])).toEqual([
      'flussonic_stream_clients{server="edge-1",stream="c/01"}',
      'flussonic_stream_clients{server="edge-1",stream="c/04"}',
    ]);
  });

  it('gives no bitrate, delay or track samples for the offline stream c/04 (fields absent, media_info null)', () => {
    const lines = sampleLines(exposition(mapAll(SAMPLE_2021_SUBSET))).filter((l) => l.includes('stream="c/04"'));
    expect(lines.some((l) => l.startsWith('flussonic_stream_alive{') && l.endsWith(' 0'))).toBe(true);
    for (const family of ['bitrate_bytes', 'input_delay', 'last_frame', 'track_', 'retries']) {
      expect(lines.filter((l) => l.startsWith(`flussonic_stream_${family}`))).toEqual([]);
    }
  });

  it('needs only the selected fields: the sample projected through select maps the same', () => {
    const select = streamsSelect(ALL_FAMILIES);
    const projected = SAMPLE_2021_SUBSET.map((item) => applySelect(item, select));
    expect(exposition(mapAll(projected))).toBe(exposition(mapAll(SAMPLE_2021_SUBSET)));
  });

  it('never puts a URL, hostname, cluster key or runtime uuid of the sample into a label', () => {
    expectNoForbiddenValues(SAMPLE_2021_SUBSET, exposition(mapAll(SAMPLE_2021_SUBSET)));
  });

  it('passes promtool check metrics', () => {
    expectPromtoolClean(exposition(mapAll(SAMPLE_2021_SUBSET)));
  });

  it('maps all nine streams of ../shared the same way as the fixture copy', (ctx) => {
    const path = sharedFile(`${SAMPLES_2021}/streams_items.json`);
    if (!path) return ctx.skip();
    const items = readJson(path) as JsonObject[];
    expect(items.map((s) => s.name)).toEqual(['c/01', 'c/02', 'c/03', 'c/04', 'c/05', 'c/06', 'c/07', 'c/08', 'c/09']);
    const text = exposition(mapAll(items));
    const lines = sampleLines(text);
    const ofStreams = (names: string[]) =>
      lines.filter((l) => names.some((n) => l.includes(`stream="${n}"`)));
    expect(ofStreams(['c/01', 'c/04', 'c/09'])).toEqual(sampleLines(readGolden('streams-2021-runtime-c01-c04-c09.prom')));
    // c/02, c/03 carry the same media as c/01; c/05..c/07 are offline like c/04; c/08 has 5 clients.
    for (const n of ['c/01', 'c/02', 'c/03', 'c/08', 'c/09']) {
      expect(lines).toContain(`flussonic_stream_bitrate_bytes_per_second{server="edge-1",stream="${n}"} 17125`);
    }
    for (const n of ['c/04', 'c/05', 'c/06', 'c/07']) {
      expect(lines).toContain(`flussonic_stream_alive{server="edge-1",stream="${n}"} 0`);
      expect(lines.filter((l) => l.includes(`stream="${n}"`) && l.startsWith('flussonic_stream_bitrate'))).toEqual([]);
    }
    expect(lines).toContain('flussonic_stream_clients{server="edge-1",stream="c/08"} 5');
    expect(lines.filter((l) => l.startsWith('flussonic_stream_info{'))).toHaveLength(9);
    expectNoForbiddenValues(items, text);
    expectPromtoolClean(text);
  });
});

describe('streams mapping: the 2025 example (nested stats)', () => {
  it('maps the example stream to the hand-checked golden exposition', () => {
    const out = mapAll(SAMPLE_2025);
    expect(withoutHelp(exposition(out))).toBe(readGolden('streams-2025-example.prom'));
    expect(out.problemCount).toBe(0);
  });

  it('needs only the selected fields: the example projected through select maps the same', () => {
    const select = streamsSelect(ALL_FAMILIES);
    const projected = SAMPLE_2025.map((item) => applySelect(item, select));
    expect(exposition(mapAll(projected))).toBe(exposition(mapAll(SAMPLE_2025)));
  });

  it('never puts an input URL, IP, user agent, password, auth URL or uuid of the example into a label', () => {
    expectNoForbiddenValues(SAMPLE_2025, exposition(mapAll(SAMPLE_2025)));
  });

  it('passes promtool check metrics', () => {
    expectPromtoolClean(exposition(mapAll(SAMPLE_2025)));
  });
});

describe('streams mapping: fields the samples do not show', () => {
  const NESTED_STATS = {
    alive: true,
    status: 'waiting',
    output_bandwidth: 8000, // bits/s
    backup_running: true,
    dvr_enabled: true,
    dvr_replication: 37,
    dvr_replication_running: true,
    input: { bytes: 5000, error_rate: 0.5, input_switches: 3, errors_lost_packets: 7, errors_decoder_reset: 2, ip: '10.1.2.3' },
    transcoder: {
      hw: 'nvenc',
      target: 'hdtv',
      qualities: 3,
      restarts: 2,
      frames: 123456,
      input_ad_announces: 4,
      output_ad_immediate: 1,
      tracks: [
        { track_id: 'v1', dup_frames_added: 10, overlimit_frames_removed: 5 },
        { track_id: 'v2', dup_frames_added: 0 },
      ],
    },
    push: [{ bytes: 1000, retries: 1 }, { bytes: 2000 }],
    media_info: { tracks: [{ track_id: 'v1', content: 'video', codec: 'hevc', width: 1920, height: 1080, avg_fps: 25.5, fps: 25, avg_gop: 50, last_gop: 48, bitrate: 4000 }] },
  };

  it('maps the nested input, transcoder, DVR and push fields with their units', () => {
    const { out, lines } = mapOne(NESTED_STATS);
    expect(out.problemCount).toBe(0);
    const s = 'server="edge-1",stream="live/one"';
    expect(lines).toEqual(
      expect.arrayContaining([
        `flussonic_stream_status{${s},status="running"} 0`,
        `flussonic_stream_status{${s},status="waiting"} 1`,
        `flussonic_stream_status{${s},status="error"} 0`,
        `flussonic_stream_output_bandwidth_bytes_per_second{${s}} 1000`,
        `flussonic_stream_received_bytes_total{${s}} 5000`,
        `flussonic_stream_input_dropped_packets_per_second{${s}} 0.5`,
        `flussonic_stream_input_errors_total{${s},error="lost_packets"} 7`,
        `flussonic_stream_input_errors_total{${s},error="decoder_reset"} 2`,
        `flussonic_stream_input_switches_total{${s}} 3`,
        `flussonic_stream_backup_active{${s}} 1`,
        `flussonic_stream_transcoder_info{${s},hw="nvenc",target="hdtv"} 1`,
        `flussonic_stream_transcoder_qualities{${s}} 3`,
        `flussonic_stream_transcoder_restarts_total{${s}} 2`,
        `flussonic_stream_transcoder_ad_markers_total{${s},kind="input_ad_announces"} 4`,
        `flussonic_stream_transcoder_ad_markers_total{${s},kind="output_ad_immediate"} 1`,
        `flussonic_stream_transcoder_frames_total{${s}} 123456`,
        `flussonic_stream_transcoder_duplicated_frames_total{${s},track="v1"} 10`,
        `flussonic_stream_transcoder_duplicated_frames_total{${s},track="v2"} 0`,
        `flussonic_stream_transcoder_dropped_frames_total{${s},track="v1"} 5`,
        `flussonic_stream_dvr_enabled{${s}} 1`,
        `flussonic_stream_dvr_replication_ratio{${s}} 0.37`,
        `flussonic_stream_dvr_replication_running{${s}} 1`,
        `flussonic_stream_push_sent_bytes_total{${s},push="0"} 1000`,
        `flussonic_stream_push_sent_bytes_total{${s},push="1"} 2000`,
        `flussonic_stream_push_retries_total{${s},push="0"} 1`,
        `flussonic_stream_track_info{${s},track="v1",content="video",codec="hevc",width="1920",height="1080",language=""} 1`,
        `flussonic_stream_track_bitrate_bytes_per_second{${s},track="v1",content="video"} 500000`,
        `flussonic_stream_track_frames_per_second{${s},track="v1"} 25.5`,
        `flussonic_stream_track_gop_frames{${s},track="v1"} 50`,
      ]),
    );
    // Ad marker kinds the transcoder did not report, and the v2 track's missing counter: no sample.
    expect(lines.filter((l) => l.includes('kind="output_ad_announces"') || l.includes('dropped_frames_total{' + s + ',track="v2"'))).toEqual([]);
    expect(lines.filter((l) => l.includes('push="1"') && l.startsWith('flussonic_stream_push_retries'))).toEqual([]);
    expect(lines.join('\n')).not.toContain('10.1.2.3');
    expectPromtoolClean(exposition(out));
  });

  it('prefers online_clients over client_count, and falls back when the newer one is null', () => {
    expect(mapOne({ online_clients: 7, client_count: 3 }).lines).toContain('flussonic_stream_clients{server="edge-1",stream="live/one"} 7');
    expect(mapOne({ online_clients: null, client_count: 3 }).lines).toContain('flussonic_stream_clients{server="edge-1",stream="live/one"} 3');
  });

  it('takes bytes_in, input_error_rate and out_bandwidth before their nested or bits/s counterparts, as the catalogue orders them', () => {
    const { lines } = mapOne({ bytes_in: 10, input_error_rate: 1, out_bandwidth: 2, output_bandwidth: 8000, input: { bytes: 20, error_rate: 9 } });
    expect(lines).toEqual(
      expect.arrayContaining([
        'flussonic_stream_received_bytes_total{server="edge-1",stream="live/one"} 10',
        'flussonic_stream_input_dropped_packets_per_second{server="edge-1",stream="live/one"} 1',
        'flussonic_stream_output_bandwidth_bytes_per_second{server="edge-1",stream="live/one"} 250',
      ]),
    );
  });

  it('prefers stats.push[i] over the flat pushes[i].stats, field by field', () => {
    const { lines } = mapOne({ push: [{ bytes: 100 }] }, { pushes: [{ url: 'rtmp://secret@cdn/live', stats: { bytes: 1, retries: 4 } }, { stats: { bytes: 50 } }] });
    expect(lines.filter((l) => l.startsWith('flussonic_stream_push'))).toEqual([
      'flussonic_stream_push_sent_bytes_total{server="edge-1",stream="live/one",push="0"} 100',
      'flussonic_stream_push_sent_bytes_total{server="edge-1",stream="live/one",push="1"} 50',
      'flussonic_stream_push_retries_total{server="edge-1",stream="live/one",push="0"} 4',
    ]);
  });

  it('uses fps and last_gop where avg_fps and avg_gop are absent', () => {
    const { lines } = mapOne({ media_info: { tracks: [{ track_id: 'v1', content: 'video', fps: 29.97, last_gop: 60 }] } });
    expect(lines).toContain('flussonic_stream_track_frames_per_second{server="edge-1",stream="live/one",track="v1"} 29.97');
    expect(lines).toContain('flussonic_stream_track_gop_frames{server="edge-1",stream="live/one",track="v1"} 60');
  });

  it('keeps one series per track id when the upstream repeats one', () => {
    const { lines } = mapOne({ media_info: { tracks: [{ track_id: 'a1', content: 'audio', bitrate: 1 }, { track_id: 'a1', content: 'audio', bitrate: 2 }] } });
    expect(lines.filter((l) => l.startsWith('flussonic_stream_track_bitrate'))).toEqual([
      'flussonic_stream_track_bitrate_bytes_per_second{server="edge-1",stream="live/one",track="a1",content="audio"} 125',
    ]);
  });
});

describe('streams mapping: values of the wrong type', () => {
  it('turns a string where a number belongs into a shape problem, not a sample', () => {
    const { out, lines } = mapOne({ alive: true, bitrate: '137', bytes_in: 5 });
    expect(lines.filter((l) => l.startsWith('flussonic_stream_bitrate'))).toEqual([]);
    expect(lines).toContain('flussonic_stream_received_bytes_total{server="edge-1",stream="live/one"} 5');
    expect(out.problems).toEqual([{ family: 'flussonic_stream_bitrate_bytes_per_second', labels: ['live/one'], got: 'string "137"' }]);
  });

  it('does not read a boolean as a number, nor a number or string as a boolean', () => {
    const { out, lines } = mapOne({ bitrate: true, alive: 'yes', publish_enabled: 1 });
    expect(lines.filter((l) => /^flussonic_stream_(bitrate|alive|publish)/.test(l))).toEqual([]);
    expect(out.problems.map((p) => p.family).sort()).toEqual([
      'flussonic_stream_alive',
      'flussonic_stream_bitrate_bytes_per_second',
      'flussonic_stream_publish_enabled',
    ]);
  });

  it('exports a state set of zeros and reports a status it does not know', () => {
    const { out, lines } = mapOne({ status: 'starting' });
    expect(lines.filter((l) => l.startsWith('flussonic_stream_status'))).toEqual([
      'flussonic_stream_status{server="edge-1",stream="live/one",status="running"} 0',
      'flussonic_stream_status{server="edge-1",stream="live/one",status="waiting"} 0',
      'flussonic_stream_status{server="edge-1",stream="live/one",status="error"} 0',
    ]);
    expect(out.problems).toEqual([{ family: 'flussonic_stream_status', labels: ['live/one'], got: 'string "starting"' }]);
  });

  it('reports an item without a usable name and maps nothing for it', () => {
    const out = newWriter();
    mapStream(out, { name: 42, stats: { alive: true } }, DEFAULTS);
    mapStream(out, { stats: { alive: true } }, DEFAULTS);
    expect(out.series).toBe(0);
    expect(out.problems.map((p) => p.got)).toEqual(['number', 'undefined']);
  });

  it('survives stats, media_info, tracks and pushes of the wrong shape', () => {
    const out = newWriter();
    const odd: JsonObject[] = [
      { name: 'a', stats: 'broken' },
      { name: 'b', stats: { media_info: [], transcoder: 5, input: 'x', push: {}, dvr_info: null } },
      { name: 'c', stats: { media_info: { tracks: [null, 'v1', { track_id: 'v1' }] } }, pushes: 'none' },
    ];
    for (const item of odd) mapStream(out, item, DEFAULTS);
    const lines = sampleLines(exposition(out));
    expect(lines.filter((l) => l.startsWith('flussonic_stream_info{'))).toHaveLength(3);
    expect(lines).toContain('flussonic_stream_track_info{server="edge-1",stream="c",track="v1",content="",codec="",width="",height="",language=""} 1');
    // Each misshapen container is reported under the family it would have fed; a null is absent.
    expect(out.problems.map((p) => `${p.labels[0]} ${p.family} ${p.got}`)).toEqual([
      'a flussonic_stream_alive string "broken"',
      'b flussonic_stream_input_switches_total string "x"',
      'b flussonic_stream_transcoder_info number',
      'b flussonic_stream_track_info array',
      'b flussonic_stream_push_sent_bytes_total object',
      'c flussonic_stream_track_info string "v1"',
      'c flussonic_stream_push_sent_bytes_total string "none"',
    ]);
  });
});

describe('streams: cardinality controls', () => {
  const items: JsonObject[] = ['live/a', 'live/b', 'test/a', 'vod/x'].map((name) => ({
    name,
    stats: { alive: true, bitrate: 1, media_info: { tracks: [{ track_id: 'v1', content: 'video' }] } },
  }));
  const streamsIn = (out: SeriesWriter) =>
    sampleLines(exposition(out))
      .filter((l) => l.startsWith('flussonic_stream_info{'))
      .map((l) => /stream="([^"]*)"/.exec(l)?.[1]);

  it('include keeps only matching streams, in every per-stream family', () => {
    const out = mapAll(items, { streams: { include: { source: 'live/.*' } }, families: ALL_FAMILIES });
    expect(streamsIn(out)).toEqual(['live/a', 'live/b']);
    expect(sampleLines(exposition(out)).every((l) => /stream="live\//.test(l))).toBe(true);
  });

  it('exclude drops matching streams', () => {
    expect(streamsIn(mapAll(items, { streams: { exclude: { source: 'test/.*' } }, families: ALL_FAMILIES }))).toEqual(['live/a', 'live/b', 'vod/x']);
  });

  it('include and exclude together: included and not excluded', () => {
    expect(streamsIn(mapAll(items, { streams: { include: { source: '.*/a|vod.*' }, exclude: { source: 'test.*' } }, families: ALL_FAMILIES }))).toEqual(['live/a', 'vod/x']);
  });

  it('patterns match whole names, and filter the same on every call and after a structured clone', () => {
    const config: StreamConfig = { streams: { include: { source: 'live' } }, families: ALL_FAMILIES };
    expect(streamsIn(mapAll(items, config))).toEqual([]);
    const anchored: StreamConfig = structuredClone({ streams: { include: { source: 'live/[ab]' } }, families: ALL_FAMILIES });
    expect(streamsIn(mapAll(items, anchored))).toEqual(['live/a', 'live/b']);
    expect(streamsIn(mapAll(items, anchored))).toEqual(['live/a', 'live/b']);
  });

  const RICH: JsonObject = {
    name: 'live/one',
    title: 'One',
    stats: {
      alive: true,
      input_bitrate: 1,
      output_bitrate: 1,
      opened_at: 1_700_000_000_000, // timestamps within the valid window (src/families/ranges.ts)
      last_dts_at: 1_700_000_000_000,
      publish_enabled: true,
      playback_duration: 7,
      input: { errors_lost_packets: 1, input_switches: 1 },
      transcoder: {
        hw: 'cpu',
        qualities: 1,
        restarts: 0,
        frames: 1,
        input_ad_announces: 0,
        output_ad_announces: 0,
        output_shifted_ad_announces: 0,
        input_ad_immediate: 0,
        output_ad_immediate: 0,
        tracks: [{ track_id: 'v1', dup_frames_added: 1, overlimit_frames_removed: 1 }],
      },
      dvr_enabled: true,
      dvr_info: { depth: 1, bytes: 1 },
      dvr_replication: 50,
      dvr_replication_running: true,
      push: [{ bytes: 1, retries: 0 }],
      media_info: { tracks: [{ track_id: 'v1', content: 'video', bitrate: 1, fps: 25, last_gop: 50 }] },
    },
    inputs: [{ url: 'udp://239.0.0.1:1234', stats: { active: true, bytes: 1, last_dts_at: 1_700_000_000_000, connected_at: 1_700_000_000_000, error: 'eof' } }],
  };
  const familiesOf = (out: SeriesWriter) => [...out.render().keys()];
  // The families of each switch come from the tier table.
  const groups = STREAM_FAMILY_GROUPS;

  for (const name of groups) {
    it(`switch ${name}: off removes exactly its families of the tier table`, () => {
      const mine = FAMILY_TIERS.filter((t) => t.switch === `families.${name}`).map((t) => t.family);
      const on = familiesOf(mapAll([RICH]));
      const off = familiesOf(mapAll([RICH], { streams: NO_FILTER, families: { ...ALL_FAMILIES, [name]: false } }));
      expect(mine.length).toBeGreaterThan(0);
      expect(on).toEqual(expect.arrayContaining(mine));
      expect(on.filter((f) => !off.includes(f)).sort()).toEqual([...mine].sort());
    });
  }

  it('leaves switched-off groups out of select', () => {
    const all = streamsSelect(ALL_FAMILIES);
    expect(all).toEqual(expect.arrayContaining(['stats.media_info', 'stats.push', 'pushes']));
    expect(streamsSelect({ ...ALL_FAMILIES, tracks: false })).not.toContain('stats.media_info');
    const noPushes = streamsSelect({ ...ALL_FAMILIES, pushes: false });
    expect(noPushes).not.toContain('stats.push');
    expect(noPushes).not.toContain('pushes');
    expect(streamsSelect(DEFAULTS_CONFIG.server.families)).toEqual([...STREAMS_SELECT]);
  });
});

describe('streams: select list', () => {
  it('names only fields of the stream object, with no duplicates and no field inside an already selected one', () => {
    const select = streamsSelect(ALL_FAMILIES);
    expect(new Set(select).size).toBe(select.length);
    for (const a of select) for (const b of select) if (a !== b) expect(b.startsWith(`${a}.`)).toBe(false);
    expect(select.every((f) => /^(name|title|named_by|pushes|inputs|stats(\.[a-z_]+)?)$/.test(f))).toBe(true);
  });

  it('covers every streams family of the catalogue with some mapping', () => {
    // Every family owned by `streams` appears in the output of the rich synthetic stream or a sample.
    const out = newWriter();
    for (const item of [...SAMPLE_2021_SUBSET, ...SAMPLE_2025]) mapStream(out, item, DEFAULTS);
    mapStream(
      out,
      {
        name: 'rich',
        stats: {
          backup_running: false,
          playback_duration: 0,
          dvr_replication: 1,
          retry_count: 0,
          input: { input_switches: 0, errors_x: 0 },
          transcoder: { qualities: 1, restarts: 0, frames: 0, input_ad_announces: 0, tracks: [{ track_id: 'v1', dup_frames_added: 0, overlimit_frames_removed: 0 }] },
          push: [{ bytes: 0, retries: 0 }],
          bytes_out: 0,
          inputs: [{ active: true, bytes: 0, last_dts_at: 1_700_000_000_000 }], // a last_dts_at of 0 means never: no sample
        },
      },
      DEFAULTS,
    );
    const filled = new Set(out.render().keys());
    expect(CATALOGUE.filter((f) => f.owner === 'streams' && !filled.has(f.name)).map((f) => f.name)).toEqual([]);
  });
});
