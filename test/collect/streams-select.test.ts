/**
 * The `select` of the streams walk, pinned for every combination of the `families.*` switches:
 * the query a server sees changes only when a family that reads a new field is added (here on
 * purpose, with it), never by a change of how the list is made.
 */
import { describe, expect, it } from 'vitest';
import { streamsSelect } from '../../src/collect/streams.js';
import type { StreamFamilySwitches } from '../../src/config/types.js';
import { ALL_FAMILIES } from './helpers.js';

const BASE =
  'name,stats.alive,stats.status,stats.bitrate,stats.out_bandwidth,stats.output_bandwidth,stats.bytes_in,stats.bytes_out,' +
  'stats.online_clients,stats.client_count,stats.retry_count,stats.input_error_rate,stats.ts_delay,stats.opened_at,' +
  'stats.last_access_at,stats.backup_running,stats.running_transcoder,stats.transcoder_overloaded,stats.input,inputs';

/** What each switch adds to the base, alone. */
const ADDED_BY: Readonly<Record<keyof StreamFamilySwitches, string>> = {
  tracks: 'stats.media_info',
  transcoder_tracks: 'stats.transcoder',
  pushes: 'stats.push,pushes',
  input_errors: '',
  inputs: '',
  details: 'title,named_by,stats.input_bitrate,stats.output_bitrate,stats.last_dts_at,stats.publish_enabled,stats.playback_duration',
  transcoder: 'stats.transcoder',
  dvr: 'stats.dvr_enabled,stats.dvr_info,stats.dvr_replication,stats.dvr_replication_running',
};

const ALL_ON =
  `${BASE},title,named_by,stats.input_bitrate,stats.output_bitrate,stats.last_dts_at,stats.publish_enabled,stats.playback_duration,` +
  'stats.transcoder,' +
  'stats.dvr_enabled,stats.dvr_info,stats.dvr_replication,stats.dvr_replication_running,stats.media_info,stats.push,pushes';

const GROUPS = Object.keys(ADDED_BY) as (keyof StreamFamilySwitches)[];
const OFF = Object.fromEntries(GROUPS.map((g) => [g, false])) as unknown as StreamFamilySwitches;

describe('the select of the streams walk', () => {
  it('is the pinned base list at default settings', () => {
    expect(streamsSelect(OFF).join(',')).toBe(BASE);
  });

  it('is the pinned full list with every switch on', () => {
    expect(streamsSelect(ALL_FAMILIES).join(',')).toBe(ALL_ON);
  });

  it('adds exactly the pinned fields for each switch alone', () => {
    for (const g of GROUPS) expect(streamsSelect({ ...OFF, [g]: true }).join(','), g).toBe(ADDED_BY[g] ? `${BASE},${ADDED_BY[g]}` : BASE);
  });

  it('is, for all 256 combinations, the full list less what no switch that is on adds', () => {
    for (let mask = 0; mask < 1 << GROUPS.length; mask++) {
      const on = GROUPS.filter((_, i) => (mask & (1 << i)) !== 0);
      const switches = { ...OFF, ...Object.fromEntries(on.map((g) => [g, true])) } as StreamFamilySwitches;
      const wanted = new Set([...BASE.split(','), ...on.flatMap((g) => (ADDED_BY[g] ? ADDED_BY[g].split(',') : []))]);
      expect(streamsSelect(switches).join(','), on.join('+') || 'none').toBe(ALL_ON.split(',').filter((f) => wanted.has(f)).join(','));
    }
  });
});
