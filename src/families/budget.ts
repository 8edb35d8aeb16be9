/**
 * The series budget: which tier every family of the catalogue is in, and which switch enables it.
 *
 *   core      always exported; the last thing dropped, and only when core series alone exceed the
 *             collector's `max_series` (counted in flussonic_exporter_series_dropped_total).
 *   default   exported unless a cap is hit; shed (whole families) after every optional family.
 *   optional  exported only when its switch is on; shed first when a cap is hit.
 *
 * Shedding goes down this table: within one collector, the optional rows in table order, then the
 * default rows in table order (so the first row of a collector is the first family to go). Core
 * rows are never shed. docs/cardinality.md documents the same table; dashboards and alert rules must
 * work on the core and default tiers (test/render/budget.test.ts checks the tiers against the
 * default config and the per-stream budget).
 *
 * The default per-stream budget is STREAM_SERIES_BUDGET series from the stream families, of which
 * INPUT_ACTIVE_RESERVED are kept for flussonic_stream_input_active (one per input, default on).
 */
import { STREAM_FAMILY_GROUPS, type StreamFamilyGroup } from '../config/switches.js';
import { CATALOGUE } from './catalogue.js';

export type Tier = 'core' | 'default' | 'optional';

/** The config switch that turns a family on: `families.<key>` of a server, or `collectors.<name>`. */
export type FamilySwitch = `families.${StreamFamilyGroup}` | 'collectors.dvrs' | 'collectors.cluster';

/** The `servers[].families` switches (declared with the config's switches). All are off by default (optional families). */
export { STREAM_FAMILY_GROUPS, type StreamFamilyGroup };

export interface FamilyTier {
  readonly family: string;
  readonly tier: Tier;
  /** The switch that enables an optional family; none for core and default families. */
  readonly switch?: FamilySwitch;
  /** Series per stream (streams families) or per session group (sessions families), at most. */
  readonly perUnit?: number;
}

const core = (family: string, perUnit?: number): FamilyTier => ({ family, tier: 'core', ...(perUnit ? { perUnit } : {}) });
const dflt = (family: string, perUnit?: number): FamilyTier => ({ family, tier: 'default', ...(perUnit ? { perUnit } : {}) });
const opt = (family: string, group: StreamFamilyGroup, perUnit?: number): FamilyTier => ({
  family,
  tier: 'optional',
  switch: `families.${group}`,
  ...(perUnit ? { perUnit } : {}),
});

/** Series per stream kept for flussonic_stream_input_active (2 inputs) within the default budget. */
export const INPUT_ACTIVE_RESERVED = 2;
/** The most series one stream makes from the stream families at default settings. */
export const STREAM_SERIES_BUDGET = 20;

/**
 * Every family of the catalogue. Rows of one collector are in shedding order (first row first).
 * `perUnit` of an optional family with a variable count (tracks, pushes, error kinds) is a
 * typical value, not a bound: those families are opt-in because they are unbounded.
 */
export const FAMILY_TIERS: readonly FamilyTier[] = Object.freeze([
  // streams: optional groups, shed first (heaviest and least used first)
  opt('flussonic_stream_track_info', 'tracks', 5),
  opt('flussonic_stream_track_bitrate_bytes_per_second', 'tracks', 5),
  opt('flussonic_stream_track_frames_per_second', 'tracks', 3),
  opt('flussonic_stream_track_gop_frames', 'tracks', 3),
  opt('flussonic_stream_transcoder_duplicated_frames_total', 'transcoder_tracks', 3),
  opt('flussonic_stream_transcoder_dropped_frames_total', 'transcoder_tracks', 3),
  opt('flussonic_stream_push_sent_bytes_total', 'pushes', 2),
  opt('flussonic_stream_push_retries_total', 'pushes', 2),
  opt('flussonic_stream_input_errors_total', 'input_errors', 10),
  opt('flussonic_stream_input_received_bytes_total', 'inputs', INPUT_ACTIVE_RESERVED),
  opt('flussonic_stream_input_last_frame_timestamp_seconds', 'inputs', INPUT_ACTIVE_RESERVED),
  opt('flussonic_stream_input_start_time_seconds', 'inputs', INPUT_ACTIVE_RESERVED),
  opt('flussonic_stream_input_error', 'inputs', INPUT_ACTIVE_RESERVED),
  opt('flussonic_stream_info', 'details', 1),
  opt('flussonic_stream_last_frame_timestamp_seconds', 'details', 1),
  opt('flussonic_stream_publish_enabled', 'details', 1),
  opt('flussonic_stream_output_bitrate_bytes_per_second', 'details', 1),
  opt('flussonic_stream_input_bitrate_bytes_per_second', 'details', 1),
  opt('flussonic_stream_transcoder_ad_markers_total', 'transcoder', 5),
  opt('flussonic_stream_transcoder_info', 'transcoder', 1),
  opt('flussonic_stream_transcoder_qualities', 'transcoder', 1),
  opt('flussonic_stream_transcoder_restarts_total', 'transcoder', 1),
  opt('flussonic_stream_transcoder_frames_total', 'transcoder', 1),
  opt('flussonic_stream_dvr_replication_ratio', 'dvr', 1),
  opt('flussonic_stream_dvr_replication_running', 'dvr', 1),
  opt('flussonic_stream_dvr_enabled', 'dvr', 1),
  opt('flussonic_stream_dvr_depth_seconds', 'dvr', 1),
  opt('flussonic_stream_dvr_size_bytes', 'dvr', 1),
  // streams: default, shed after every optional family; the ones alert rules use go last
  dflt('flussonic_stream_output_bandwidth_bytes_per_second', 1),
  dflt('flussonic_stream_transcoder_running', 1),
  dflt('flussonic_stream_input_delay_seconds', 1),
  dflt('flussonic_stream_input_dropped_packets_per_second', 1),
  dflt('flussonic_stream_input_active', INPUT_ACTIVE_RESERVED),
  // restarts: retries on 23.x/24.x; start time changes and input switches on 2025 servers
  dflt('flussonic_stream_retries_total', 1),
  dflt('flussonic_stream_start_time_seconds', 1),
  dflt('flussonic_stream_input_switches_total', 1),
  dflt('flussonic_stream_backup_active', 1),
  dflt('flussonic_stream_transcoder_overloaded', 1),
  dflt('flussonic_stream_last_access_timestamp_seconds', 1),
  // streams: core
  core('flussonic_stream_alive', 1),
  core('flussonic_stream_status', 3),
  core('flussonic_stream_bitrate_bytes_per_second', 1),
  core('flussonic_stream_clients', 1),
  core('flussonic_stream_received_bytes_total', 1),
  core('flussonic_stream_sent_bytes_total', 1),

  // sessions: budgeted per group (4 series) on their own cap; the histograms go first
  dflt('flussonic_session_duration_seconds'),
  core('flussonic_sessions', 1),
  core('flussonic_sessions_opened_total', 1),
  core('flussonic_sessions_closed_total', 1),
  core('flussonic_sessions_sent_bytes_total', 1),

  // dvrs: the collector is off by default
  ...['flussonic_dvr_storage_size_bytes', 'flussonic_dvr_storage_used_bytes', 'flussonic_dvr_storage_errors_total'].map(
    (family): FamilyTier => ({ family, tier: 'optional', switch: 'collectors.dvrs' }),
  ),
  // cluster: the collector is off by default; one series per peer
  ...CATALOGUE.filter((f) => f.owner === 'cluster').map((f): FamilyTier => ({ family: f.name, tier: 'optional', switch: 'collectors.cluster' })),
  // self, server and catena families: a few per server; never shed
  ...CATALOGUE.filter((f) => f.owner === 'self' || f.owner === 'server' || f.owner === 'operations').map((f) => core(f.name)),
]);

/** A row of the table with its place in the shedding order: -1 for core (never shed). */
export interface RankedTier extends FamilyTier {
  readonly shedRank: number;
}

/** Optional rows in table order, then default rows in table order: the shedding order. */
const SHED_ORDER: readonly FamilyTier[] = [
  ...FAMILY_TIERS.filter((t) => t.tier === 'optional'),
  ...FAMILY_TIERS.filter((t) => t.tier === 'default'),
];

const BY_FAMILY: ReadonlyMap<string, RankedTier> = new Map(
  FAMILY_TIERS.map((t) => [t.family, { ...t, shedRank: t.tier === 'core' ? -1 : SHED_ORDER.indexOf(t) }]),
);

/** The tier row of a family; families missing from the table count as core (never shed). */
export function tierOf(family: string): RankedTier {
  return BY_FAMILY.get(family) ?? { family, tier: 'core', shedRank: -1 };
}

/** The families of one collector (their names) in shedding order, first shed first. */
export function shedOrderOf(families: readonly string[]): string[] {
  const wanted = new Set(families);
  return SHED_ORDER.filter((t) => wanted.has(t.family)).map((t) => t.family);
}

/** Whether a family is on with these switches (core and default: always). */
export function familyEnabled(
  family: string,
  switches: Readonly<Record<StreamFamilyGroup, boolean>>,
  collectors: Readonly<Record<string, boolean>>,
): boolean {
  const t = tierOf(family);
  if (!t.switch) return true;
  const [kind, key] = t.switch.split('.') as ['families' | 'collectors', string];
  return kind === 'families' ? switches[key as StreamFamilyGroup] === true : collectors[key] === true;
}
