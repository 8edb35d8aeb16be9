/**
 * flussonic_stream_playback_seconds_total (docs/metrics-additions.md "Streams: watch time"): the
 * server's `stats.playback_duration`, exported with `families.details`, selected only then.
 */
import { describe, expect, it } from 'vitest';
import { streamsSelect } from '../../src/collect/streams.js';
import { ALL_FAMILIES, exposition, mapStreams, NO_FILTER, sampleLines } from './helpers.js';

const FAMILY = 'flussonic_stream_playback_seconds_total';
const ON = { streams: NO_FILTER, families: ALL_FAMILIES };
const OFF = { streams: NO_FILTER, families: { ...ALL_FAMILIES, details: false } };

function playbackLines(stats: Record<string, unknown>, config = ON) {
  const out = mapStreams([{ name: 'live/one', stats: { alive: true, ...stats } }], config);
  return { out, lines: sampleLines(exposition(out)).filter((l) => l.startsWith(FAMILY)) };
}

describe('stream watch time', () => {
  it('exports playback_duration as seconds watched, with the details switch on', () => {
    expect(playbackLines({ playback_duration: 86_400 }).lines).toEqual([`${FAMILY}{server="edge-1",stream="live/one"} 86400`]);
  });

  it('is absent with the details switch off, and when the server does not report the field', () => {
    expect(playbackLines({ playback_duration: 5 }, OFF).lines).toEqual([]);
    expect(playbackLines({}).lines).toEqual([]);
    expect(playbackLines({ playback_duration: null }).lines).toEqual([]);
  });

  it('refuses a negative count and reports a value of the wrong type', () => {
    const negative = playbackLines({ playback_duration: -3 });
    expect(negative.lines).toEqual([]);
    expect(negative.out.checks.byFamily.get(FAMILY)).toBe(1);
    const text = playbackLines({ playback_duration: '12' });
    expect(text.lines).toEqual([]);
    expect(text.out.problems.map((p) => p.family)).toEqual([FAMILY]);
  });

  it('asks the server for the field only with the details switch on', () => {
    expect(streamsSelect(ALL_FAMILIES)).toContain('stats.playback_duration');
    expect(streamsSelect({ ...ALL_FAMILIES, details: false })).not.toContain('stats.playback_duration');
  });
});
