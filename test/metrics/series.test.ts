import { describe, expect, it } from 'vitest';
import { familyByName, SESSION_DURATION_BUCKETS } from '../../src/metrics/catalogue.js';
import { escapeLabelValue, formatValue, SeriesWriter } from '../../src/metrics/series.js';

const alive = familyByName('flussonic_stream_alive');
const clients = familyByName('flussonic_stream_clients');
const duration = familyByName('flussonic_session_duration_seconds');

function lines(w: SeriesWriter, family: string): string[] {
  return Buffer.concat(w.render().get(family) ?? []).toString('utf8').split('\n').filter(Boolean);
}

describe('SeriesWriter', () => {
  it('puts the target label first and the family labels after it, in catalogue order', () => {
    const w = new SeriesWriter([['server', 'edge-1']]);
    w.add(clients, ['c/01'], 5);
    expect(lines(w, clients.name)).toEqual(['flussonic_stream_clients{server="edge-1",stream="c/01"} 5']);
  });

  it('turns booleans into 1 and 0', () => {
    const w = new SeriesWriter([['server', 's']]);
    w.add(alive, ['a'], true);
    w.add(alive, ['b'], false);
    expect(lines(w, alive.name)).toEqual([
      'flussonic_stream_alive{server="s",stream="a"} 1',
      'flussonic_stream_alive{server="s",stream="b"} 0',
    ]);
  });

  it('adds no sample for null or undefined, and counts no series for them', () => {
    const w = new SeriesWriter([['server', 's']]);
    w.add(clients, ['a'], null);
    w.add(clients, ['b'], undefined);
    expect(w.render().has(clients.name)).toBe(false);
    expect(w.series).toBe(0);
    expect(w.problemCount).toBe(0);
  });

  it('reports a value of the wrong type as a shape problem instead of a sample', () => {
    const w = new SeriesWriter([['server', 's']]);
    w.add(clients, ['a'], '12');
    w.add(clients, ['b'], { n: 1 });
    expect(w.render().has(clients.name)).toBe(false);
    expect(w.problemCount).toBe(2);
    expect(w.problems[0]).toEqual({ family: clients.name, labels: ['a'], got: 'string "12"' });
    expect(w.problems[1]?.got).toBe('object');
  });

  it('escapes backslash, double quote and newline in label values', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const w = new SeriesWriter([['server', 'x"y']]);
    w.add(clients, ['new\nline'], 1);
    expect(lines(w, clients.name)).toEqual(['flussonic_stream_clients{server="x\\"y",stream="new\\nline"} 1']);
  });

  it('formats special floats the way Prometheus parses them', () => {
    expect(formatValue(Number.NaN)).toBe('NaN');
    expect(formatValue(Infinity)).toBe('+Inf');
    expect(formatValue(-Infinity)).toBe('-Inf');
    expect(formatValue(0.25)).toBe('0.25');
    expect(formatValue(1e21)).toBe('1e+21');
  });

  it('drops series beyond max_series in arrival order and counts them', () => {
    const w = new SeriesWriter([['server', 's']], 3);
    for (let i = 0; i < 5; i++) w.add(clients, [`s${i}`], i);
    expect(lines(w, clients.name).map((l) => l.split(' ')[0])).toEqual([
      'flussonic_stream_clients{server="s",stream="s0"}',
      'flussonic_stream_clients{server="s",stream="s1"}',
      'flussonic_stream_clients{server="s",stream="s2"}',
    ]);
    expect(w.series).toBe(3);
    expect(w.dropped).toBe(2);
  });

  it('renders UTF-8 bytes, every line ending in a newline, across the blocks it encodes as it goes', () => {
    const w = new SeriesWriter([['server', 's']]);
    const names = Array.from({ length: 600 }, (_, i) => `Первый канал/${i} ✓`);
    names.forEach((name, i) => w.add(clients, [name], i));
    const bytes = Buffer.concat(w.render().get(clients.name)!);
    expect(bytes.at(-1)).toBe(0x0a);
    const text = bytes.toString('utf8');
    expect(text.split('\n').slice(0, -1)).toEqual(names.map((name, i) => `flussonic_stream_clients{server="s",stream="${name}"} ${i}`));
  });

  it('uses explicit label names for families with configured labels', () => {
    const sessions = familyByName('flussonic_sessions');
    const w = new SeriesWriter([['server', 's']]);
    w.add(sessions, ['hls', 'DE'], 7, ['proto', 'country']);
    expect(lines(w, sessions.name)).toEqual(['flussonic_sessions{server="s",proto="hls",country="DE"} 7']);
  });

  it('renders a histogram as cumulative buckets, +Inf, sum and count', () => {
    const w = new SeriesWriter([['server', 's']]);
    const buckets = SESSION_DURATION_BUCKETS.slice(0, 2);
    w.addHistogram(duration, ['hls'], { buckets, cumulativeCounts: [1, 3], sum: 70, count: 4 });
    expect(lines(w, duration.name)).toEqual([
      'flussonic_session_duration_seconds_bucket{server="s",proto="hls",le="10"} 1',
      'flussonic_session_duration_seconds_bucket{server="s",proto="hls",le="30"} 3',
      'flussonic_session_duration_seconds_bucket{server="s",proto="hls",le="+Inf"} 4',
      'flussonic_session_duration_seconds_sum{server="s",proto="hls"} 70',
      'flussonic_session_duration_seconds_count{server="s",proto="hls"} 4',
    ]);
    expect(w.series).toBe(1);
  });
});
