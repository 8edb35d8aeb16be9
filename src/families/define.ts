/**
 * How a metric family is declared: once, beside the code that fills it (each collector's module,
 * src/serve/self-families.ts for the exporter's own). A declaration says everything the rest of
 * the exporter derives: name, type, labels, HELP, valid range, budget tier and switch, and the API
 * fields it reads. The catalogue (src/serve/catalogue.ts) is the union of the tables, in the order
 * they are exposed; METRICS.md, the budget table, the `select` of the streams walk and the
 * dashboards' "Needs" notes are derived from it.
 *
 * The series budget (docs/cardinality.md) has three tiers:
 *   core      always exported; dropped per series only when core series alone exceed the
 *             collector's `max_series` (flussonic_exporter_series_dropped_total).
 *   default   exported unless a cap is hit; shed (whole families) after every optional family.
 *   optional  exported only when its switch is on; shed first when a cap is hit.
 * Within one collector, shedding follows the collector's shedding order (defineFamilies()).
 */
import { rangeFor, type ValueRange } from './ranges.js';
import type { COLLECTOR_DEFAULTS, StreamFamilyGroup } from '../config/switches.js';
import type { EventSwitch } from '../config/events-schema.js';

/** A collector that is off by default: its `collectors:` switch turns its families on. */
type OptInCollector = { [K in keyof typeof COLLECTOR_DEFAULTS]: (typeof COLLECTOR_DEFAULTS)[K] extends false ? K : never }[keyof typeof COLLECTOR_DEFAULTS];

/** The config switch that turns an optional family on: `families.<group>` of a server, or `collectors.<name>`. */
export type FamilySwitch = `families.${StreamFamilyGroup}` | `collectors.${OptInCollector}` | `events.families.${EventSwitch}`;

export type MetricType = 'gauge' | 'counter' | 'histogram';

/** Which part of the exporter fills a family: a collector, or the exporter itself. */
export type FamilyOwner = 'self' | 'server' | 'streams' | 'sessions' | 'dvrs' | 'cluster' | 'operations' | 'events';

export type Tier = 'core' | 'default' | 'optional';

/**
 * The stream stats generations of Flussonic: `flat` (23.x/24.x) and `nested` (2025 and later).
 * A family only one of them reports says so (`shapes`), and the dashboards' notes follow.
 */
export type StatsShape = 'flat' | 'nested';
export const STATS_SHAPES: readonly StatsShape[] = Object.freeze(['flat', 'nested']);

/** A family's place in the budget. */
export interface TierSpec {
  readonly tier: Tier;
  /** The switch that turns an optional family on; none for core and default families. */
  readonly switch?: FamilySwitch;
  /**
   * Series per stream (streams families) or per session group, at most. For an optional family
   * with a variable count (tracks, pushes, error kinds) a typical value, not a bound: such
   * families are opt-in because they are unbounded.
   */
  readonly perUnit?: number;
}

export const core = (perUnit?: number): TierSpec => ({ tier: 'core', ...(perUnit ? { perUnit } : {}) });
export const byDefault = (perUnit?: number): TierSpec => ({ tier: 'default', ...(perUnit ? { perUnit } : {}) });
/** Optional under `families.<group>` of a server. */
export const optional = (group: StreamFamilyGroup, perUnit?: number): TierSpec => ({
  tier: 'optional',
  switch: `families.${group}`,
  ...(perUnit ? { perUnit } : {}),
});
/** Optional under `events.families.<name>` (the event sink's per-stream families). */
export const optionalEvent = (name: EventSwitch, perUnit?: number): TierSpec => ({ tier: 'optional', switch: `events.families.${name}`, ...(perUnit ? { perUnit } : {}) });
/** Optional because its collector is off by default (`collectors.<name>`). */
export const optInCollector = (name: OptInCollector): TierSpec => ({ tier: 'optional', switch: `collectors.${name}` });

/** One family as its collector declares it. */
export interface FamilyDecl {
  readonly name: string;
  readonly type: MetricType;
  /**
   * Label names in exposition order. For the sessions families the grouping labels are configured
   * (`group_by`), so `labels` lists only the fixed ones and `groupByLabels` is true.
   */
  readonly labels: readonly string[];
  readonly help: string;
  /** Core when not given: self, server and Catena families, a few per target, are never shed. */
  readonly tier?: TierSpec;
  /** Valid values when the unit of the name does not give them (ranges.ts rangeFor()). */
  readonly range?: ValueRange;
  /**
   * The fields of the API item the family is read from, as `select` names them (a nested object
   * selected whole is named whole). The streams collector selects a field when a family that is
   * on reads it.
   */
  readonly reads?: readonly string[];
  /** The stats generations whose servers report it, when not every one does. */
  readonly shapes?: readonly StatsShape[];
  readonly groupByLabels?: boolean;
}

/** A declared family as the rest of the exporter sees it. */
export interface FamilyDef extends TierSpec {
  readonly name: string;
  readonly type: MetricType;
  readonly owner: FamilyOwner;
  readonly labels: readonly string[];
  readonly help: string;
  readonly groupByLabels?: boolean;
  /** Valid values: a value outside is not exported but counted (ranges.ts). */
  readonly range: ValueRange;
  readonly reads: readonly string[];
  /** The stats generations whose servers report it (both unless the declaration says otherwise). */
  readonly shapes: readonly StatsShape[];
  /**
   * Place in the shedding order of its collector, first shed first: optional families in the
   * collector's order, then default ones; -1 for core families (never shed).
   */
  readonly shedRank: number;
}

/**
 * A collector's families, keyed by the names its mapping uses, in exposition order (the order of
 * the keys). `shedOrder` lists every optional and default family of the table, first shed first;
 * the ranks put every optional family before every default one whatever the list's order.
 */
export function defineFamilies<K extends string>(
  owner: FamilyOwner,
  decls: Readonly<Record<K, FamilyDecl>>,
  shedOrder: readonly NoInfer<K>[] = [],
): Readonly<Record<K, FamilyDef>> {
  const keys = Object.keys(decls) as K[];
  const tierOf = (key: K): Tier => decls[key].tier?.tier ?? 'core';
  const sheddable = [...shedOrder.filter((k) => tierOf(k) === 'optional'), ...shedOrder.filter((k) => tierOf(k) === 'default')];
  for (const key of keys) {
    const listed = shedOrder.filter((k) => k === key).length;
    if (listed !== (tierOf(key) === 'core' ? 0 : 1)) {
      throw new Error(`family ${decls[key].name}: a ${tierOf(key)} family must be in the shedding order of ${owner} ${tierOf(key) === 'core' ? 'never' : 'once'}`);
    }
  }
  const out = {} as Record<K, FamilyDef>;
  for (const key of keys) {
    const { tier = core(), range, reads = [], shapes = STATS_SHAPES, groupByLabels = false, ...decl } = decls[key];
    // Every property set, in one order: one object shape for every family the writer sees.
    out[key] = Object.freeze({
      name: decl.name,
      type: decl.type,
      owner,
      labels: Object.freeze([...decl.labels]),
      help: decl.help,
      groupByLabels,
      range: range ?? rangeFor(decl.name),
      tier: tier.tier,
      switch: tier.switch,
      perUnit: tier.perUnit,
      reads: Object.freeze([...reads]),
      shapes: Object.freeze([...shapes]),
      shedRank: sheddable.indexOf(key),
    });
  }
  return Object.freeze(out);
}

/** The families of a table, in exposition order. */
export function familyList<K extends string>(table: Readonly<Record<K, FamilyDef>>): readonly FamilyDef[] {
  return Object.freeze(Object.values<FamilyDef>(table));
}

/**
 * The `select` of a walk whose families are all on together: the walk's key, then every field the
 * families read, in the order they first name them.
 */
export function selectOf<K extends string>(key: string, table: Readonly<Record<K, FamilyDef>>): readonly string[] {
  return Object.freeze([...new Set([key, ...familyList(table).flatMap((f) => f.reads)])]);
}
