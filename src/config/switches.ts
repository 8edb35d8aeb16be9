/**
 * The names of the per-server switches, as plain data: the collectors (and which run by default),
 * the optional stream family groups and the session grouping labels. The config schema declares
 * the switches from these lists; src/collect and src/families import them from here.
 */

/** Each collector of a Flussonic server and whether its `collectors:` switch is on by default. */
export const COLLECTOR_DEFAULTS = Object.freeze({ streams: true, sessions: true, server: true, dvrs: false, cluster: false });
export type CollectorName = keyof typeof COLLECTOR_DEFAULTS;
export const COLLECTOR_NAMES = Object.freeze(Object.keys(COLLECTOR_DEFAULTS)) as readonly CollectorName[];

/** The `servers[].families` switches. All are off by default (optional families). */
export const STREAM_FAMILY_GROUPS = ['tracks', 'transcoder_tracks', 'pushes', 'input_errors', 'inputs', 'details', 'transcoder', 'dvr'] as const;
export type StreamFamilyGroup = (typeof STREAM_FAMILY_GROUPS)[number];

/** The labels `servers[].sessions.group_by` may list, and its default. */
export const SESSION_GROUP_BY_ALLOWED = ['stream', 'proto', 'country', 'dvr', 'secure', 'segments_container', 'manifest_type'] as const;
export const SESSION_GROUP_BY_DEFAULT = ['stream', 'proto'] as const;
