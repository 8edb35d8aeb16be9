/**
 * Which config switches a panel's data needs, derived from the tier table of the exporter
 * (FAMILY_TIERS in src/serve/catalogue.ts, derived from the family declarations), so the "Needs `families.X: true`" notes of the
 * dashboards follow the table and cannot drift from it.
 *
 * A panel reads the metric names of its queries (promql.ts). A catalogue family needs the switch
 * of its tier row when it is optional, nothing when it is core or default; Prometheus' own series
 * (`up`, `scrape_*`) need nothing. A recording rule of grafana/rules (a name with `:`) needs what
 * its expression needs in full (switchesOf). A panel says "Needs" for a switch every query needs
 * in full, "Some series need" for one that only some queries or some alternatives (`or`) read.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { CATALOGUE, FAMILY_TIERS } from '../../src/serve/catalogue.js';
import { STATS_SHAPES, type FamilySwitch, type StatsShape } from '../../src/families/define.js';
import { selectors, tokenize } from './promql.js';

export type { FamilySwitch, StatsShape };

/** The repository root: the nearest directory above this file with grafana/dashboards in it. */
export function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'grafana', 'dashboards')) && existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('grafana/dashboards not found above the generator');
    dir = parent;
  }
}

const SWITCH_OF: ReadonlyMap<string, FamilySwitch | undefined> = new Map(FAMILY_TIERS.map((t) => [t.family, t.switch]));

/** The family a metric name belongs to: itself, or a histogram's family for `_bucket`, `_sum`, `_count`. */
function familyOf(name: string): string {
  if (SWITCH_OF.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return SWITCH_OF.has(base) ? base : name;
}

let recordExprs: ReadonlyMap<string, string> | undefined;

/** Every recording rule of grafana/rules/*.yml: its name and expression. */
function recordingRules(): ReadonlyMap<string, string> {
  if (!recordExprs) {
    const dir = join(repositoryRoot(), 'grafana', 'rules');
    const rules = new Map<string, string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yml') || f.endsWith('.yaml')).sort()) {
      const doc = parseYaml(readFileSync(join(dir, file), 'utf8')) as { groups?: { rules?: { record?: string; expr: string }[] }[] };
      for (const rule of (doc.groups ?? []).flatMap((g) => g.rules ?? [])) if (rule.record) rules.set(rule.record, String(rule.expr));
    }
    recordExprs = rules;
  }
  return recordExprs;
}

/**
 * The switches an expression needs, each with whether the expression yields nothing without it
 * (`true`) or only loses some series (`false`). Without `or` and `unless`, every selector must
 * have series for the expression to have any (an aggregation, a function, or a binary operation
 * joining them), so each switch is needed in full; with them, a switch is needed in full only
 * when every metric of the expression needs it.
 */
export function exprNeeds(expr: string, seen: ReadonlySet<string> = new Set()): Map<FamilySwitch, boolean> {
  const names = [...new Set(selectors(expr).map((s) => s.metric))];
  const perName = names.map((n) => switchesOf(n, seen));
  const alternatives = tokenize(expr).some((t) => t.kind === 'ident' && (t.text === 'or' || t.text === 'unless'));
  const needs = new Map<FamilySwitch, boolean>();
  for (const sw of perName.flat()) needs.set(sw, !alternatives || perName.every((s) => s.includes(sw)));
  return needs;
}

/**
 * The switches every series of a metric name needs: [] when it has series by default (core and
 * default families, Prometheus' own series). A recording rule needs the switches its expression
 * needs in full; an `or` in a rule is a fallback (the restarts rule reads per-input start times
 * when families.inputs is on, default families otherwise), so a switch only some of its
 * alternatives read is not one its series need.
 */
export function switchesOf(name: string, seen: ReadonlySet<string> = new Set()): FamilySwitch[] {
  if (name.includes(':')) {
    const expr = recordingRules().get(name);
    if (expr === undefined || seen.has(name)) return [];
    return [...exprNeeds(expr, new Set([...seen, name]))].filter(([, all]) => all).map(([sw]) => sw);
  }
  const sw = SWITCH_OF.get(familyOf(name));
  return sw ? [sw] : [];
}

/** A switch a panel's data needs; `all` when every query of the panel needs it in full. */
export interface PanelNeed {
  readonly switch: FamilySwitch;
  readonly all: boolean;
}

/** The switches the queries of a panel need, in the order the queries read them. */
export function panelNeeds(exprs: readonly string[]): PanelNeed[] {
  const perQuery = exprs.map((e) => exprNeeds(e));
  const switches = [...new Set(perQuery.flatMap((m) => [...m.keys()]))];
  return switches.map((sw) => ({ switch: sw, all: perQuery.every((m) => m.get(sw) === true) }));
}

/** Whether an expression reads a family of the event sink receiver (owner `events`): it needs `events.enabled`. */
export function readsEvents(exprs: readonly string[]): boolean {
  return exprs.some((e) => selectors(e).some((s) => FAMILY_BY_NAME.get(familyOf(s.metric))?.owner === 'events'));
}

// ---------------------------------------------------------------------------------------------
// Stats generations: which Flussonic servers fill a panel (a family's `shapes` declaration)

const FAMILY_BY_NAME = new Map(CATALOGUE.map((f) => [f.name, f]));

/** What an expression reads that not every generation reports: the shapes with data, and those fields. */
export interface ExprShapes {
  readonly shapes: readonly StatsShape[];
  /** The API fields (the families' `reads`) of the metrics only some generations report. */
  readonly fields: readonly string[];
}

/**
 * The stats generations on which an expression has data. Without `or` and `unless` every selector
 * must have series, so only the generations all its metrics share; with them, any generation one
 * of its alternatives has. A recording rule has what its expression has; Prometheus' own series
 * and families without a `shapes` declaration are there on every generation.
 */
export function exprShapes(expr: string, seen: ReadonlySet<string> = new Set()): ExprShapes {
  const names = [...new Set(selectors(expr).map((s) => s.metric))];
  const perName = names.map((n) => shapesOfName(n, seen));
  const alternatives = tokenize(expr).some((t) => t.kind === 'ident' && (t.text === 'or' || t.text === 'unless'));
  const shapes = STATS_SHAPES.filter((shape) => (alternatives ? perName.some((p) => p.shapes.includes(shape)) : perName.every((p) => p.shapes.includes(shape))));
  const fields = shapes.length === STATS_SHAPES.length ? [] : [...new Set(perName.filter((p) => p.shapes.length < STATS_SHAPES.length).flatMap((p) => p.fields))];
  return { shapes, fields };
}

function shapesOfName(name: string, seen: ReadonlySet<string>): ExprShapes {
  if (name.includes(':')) {
    const expr = recordingRules().get(name);
    return expr === undefined || seen.has(name) ? { shapes: STATS_SHAPES, fields: [] } : exprShapes(expr, new Set([...seen, name]));
  }
  const def = FAMILY_BY_NAME.get(familyOf(name));
  return def && def.shapes.length < STATS_SHAPES.length ? { shapes: def.shapes, fields: def.reads } : { shapes: STATS_SHAPES, fields: [] };
}

/** Which generations fill a panel: `all` when every query needs one of `shapes`, else only some series. */
export interface PanelShapes {
  readonly shapes: readonly StatsShape[];
  readonly all: boolean;
  readonly fields: readonly string[];
}

/** The generations a panel's queries are limited to, or undefined when every generation fills all of it. */
export function panelShapes(exprs: readonly string[]): PanelShapes | undefined {
  const perQuery = exprs.map((e) => exprShapes(e));
  const limited = perQuery.filter((q) => q.shapes.length < STATS_SHAPES.length);
  if (limited.length === 0) return undefined;
  const fields = [...new Set(limited.flatMap((q) => q.fields))];
  const union = STATS_SHAPES.filter((shape) => perQuery.some((q) => q.shapes.includes(shape)));
  if (union.length < STATS_SHAPES.length) return { shapes: union, all: true, fields };
  // Some queries are limited: the note names the generation(s) those queries are limited to.
  return { shapes: STATS_SHAPES.filter((shape) => limited.every((q) => q.shapes.includes(shape))), all: false, fields };
}
