/**
 * The switches of the settings that decide which families are exported, as plain data: the
 * `servers[].families` groups, the `servers[].collectors` defaults and the allowed `group_by`
 * labels of the sessions families. A leaf (no imports): src/config reads it to build its schema
 * and defaults, the family declarations name their switch from it.
 */

/** The `servers[].families` switches. All are off by default (their families are optional). */
export const STREAM_FAMILY_GROUPS = [
  'tracks',
  'transcoder_tracks',
  'pushes',
  'input_errors',
  'inputs',
  'details',
  'transcoder',
  'dvr',
] as const;
export type StreamFamilyGroup = (typeof STREAM_FAMILY_GROUPS)[number];

/**
 * Whether each collector of a Flussonic server is on by default (`servers[].collectors`). The
 * collector table (src/collect/index.ts) creates them; `dvrs` and `cluster` are opt-in.
 */
export const COLLECTOR_DEFAULT_ENABLED = Object.freeze({
  streams: true,
  sessions: true,
  server: true,
  dvrs: false,
  cluster: false,
} as const);
export type ServerCollectorName = keyof typeof COLLECTOR_DEFAULT_ENABLED;

/** A collector that is off by default: its switch turns its families on. */
export type OptInCollector = { [K in ServerCollectorName]: (typeof COLLECTOR_DEFAULT_ENABLED)[K] extends false ? K : never }[ServerCollectorName];

/** The config switch that turns an optional family on: `families.<group>` of a server, or `collectors.<name>`. */
export type FamilySwitch = `families.${StreamFamilyGroup}` | `collectors.${OptInCollector}`;

/** The labels `servers[].sessions.group_by` may name, and its default. */
export const SESSION_GROUP_BY_ALLOWED = ['stream', 'proto', 'country', 'dvr', 'secure', 'segments_container', 'manifest_type'] as const;
export const SESSION_GROUP_BY_DEFAULT = ['stream', 'proto'] as const;
