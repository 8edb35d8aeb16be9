/**
 * The metric catalogue: every family the exporter can expose, in exposition order. It is the union
 * of the tables declared beside what fills them (the exporter's own families in self-families.ts,
 * the collectors' in src/collect, see src/collect/families.ts), and the public contract of
 * design/metrics.md in code: METRICS.md is generated from it (`npm run docs:metrics`) and a test
 * checks it against the design and docs/metrics-additions.md. The budget table (tiers, switches,
 * shedding order) is derived from the same declarations.
 */
import { UPSTREAM_FAMILIES } from '../collect/families.js';
import { familyList, type FamilyDef, type FamilyOwner, type Tier } from '../families/define.js';
import type { FamilySwitch } from '../families/define.js';
import type { StreamFamilyGroup } from '../config/switches.js';
import { SELF_FAMILIES } from './self-families.js';
import { EVENT_FAMILIES } from '../events/families.js';

export const CATALOGUE: readonly FamilyDef[] = Object.freeze([...familyList(SELF_FAMILIES), ...UPSTREAM_FAMILIES, ...familyList(EVENT_FAMILIES)]);

const BY_NAME: ReadonlyMap<string, FamilyDef> = new Map(CATALOGUE.map((f) => [f.name, f]));

/** The family of that name; throws for a name not in the catalogue (a programming error). */
export function familyByName(name: string): FamilyDef {
  const def = BY_NAME.get(name);
  if (!def) throw new Error(`metric family ${name} is not in the catalogue`);
  return def;
}

export function familiesOf(owner: FamilyOwner): FamilyDef[] {
  return CATALOGUE.filter((f) => f.owner === owner);
}

/** A family's row of the budget table. */
export interface FamilyTier {
  readonly family: string;
  readonly tier: Tier;
  /** The switch that enables an optional family; none for core and default families. */
  readonly switch?: FamilySwitch;
  /** Series per stream (streams families) or per session group (sessions families), at most. */
  readonly perUnit?: number;
}

/** A row of the table with its place in its collector's shedding order: -1 for core (never shed). */
export interface RankedTier extends FamilyTier {
  readonly shedRank: number;
}

function rowOf(f: FamilyDef): RankedTier {
  return {
    family: f.name,
    tier: f.tier,
    ...(f.switch ? { switch: f.switch } : {}),
    ...(f.perUnit ? { perUnit: f.perUnit } : {}),
    shedRank: f.shedRank,
  };
}

/**
 * The budget table: every family of the catalogue, each collector's sheddable families in its
 * shedding order (first shed first), then the core ones. docs/cardinality.md explains it.
 */
export const FAMILY_TIERS: readonly RankedTier[] = Object.freeze(
  [...new Set(CATALOGUE.map((f) => f.owner))].flatMap((owner) =>
    CATALOGUE.filter((f) => f.owner === owner)
      .sort((a, b) => rank(a) - rank(b))
      .map(rowOf),
  ),
);

/** Sheddable families by their rank, core ones after them in catalogue order (a stable sort). */
function rank(f: FamilyDef): number {
  return f.shedRank < 0 ? Number.MAX_SAFE_INTEGER : f.shedRank;
}

/** Optional rows in table order, then default rows in table order: the shedding order. */
const SHED_ORDER: readonly RankedTier[] = [...FAMILY_TIERS.filter((t) => t.tier === 'optional'), ...FAMILY_TIERS.filter((t) => t.tier === 'default')];

const TIER_BY_FAMILY: ReadonlyMap<string, RankedTier> = new Map(FAMILY_TIERS.map((t) => [t.family, t]));

/** The tier row of a family; families missing from the table count as core (never shed). */
export function tierOf(family: string): RankedTier {
  return TIER_BY_FAMILY.get(family) ?? { family, tier: 'core', shedRank: -1 };
}

/** The families (their names) in shedding order, first shed first; core ones are left out. */
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
