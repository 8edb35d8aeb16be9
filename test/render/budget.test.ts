/**
 * The tier table (FAMILY_TIERS of src/serve/catalogue.ts) against the catalogue, the config and the alert rules:
 * every family has one tier; optional families have a switch the config knows, off by default;
 * the default set of one stream fits the per-stream budget; every alert can fire on the default set.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';
import { KNOWN_KEYS } from '../../src/docs/config-schema.js';
import { FAMILY_TIERS, familyEnabled, shedOrderOf, tierOf } from '../../src/serve/catalogue.js';
import { INPUT_ACTIVE_RESERVED, STREAM_SERIES_BUDGET } from '../../src/collect/streams-map.js';
import { STREAM_FAMILY_GROUPS } from '../../src/config/switches.js';
import { EVENT_SWITCHES } from '../../src/config/events-schema.js';
import { CATALOGUE, familiesOf } from '../../src/serve/catalogue.js';
import { REPO_ROOT } from '../helpers/shared.js';

const INPUT_ACTIVE = 'flussonic_stream_input_active';
const defaultsOn = (family: string) => familyEnabled(family, DEFAULTS.server.families, DEFAULTS.server.collectors);

describe('tier table', () => {
  it('has exactly one row per catalogue family and nothing else', () => {
    const names = FAMILY_TIERS.map((t) => t.family);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(CATALOGUE.map((f) => f.name).sort());
  });

  it('gives every optional family a switch the config knows, off by default, and no switch to the others', () => {
    for (const t of FAMILY_TIERS) {
      if (t.tier !== 'optional') {
        expect(t.switch, t.family).toBeUndefined();
        continue;
      }
      const parts = t.switch!.split('.');
      const [kind, key] = parts.length === 3 ? [`${parts[0]}.${parts[1]}`, parts[2]!] : [parts[0]!, parts[1]!];
      const known = { families: KNOWN_KEYS.serverFamilies, collectors: KNOWN_KEYS.serverCollectors, 'events.families': EVENT_SWITCHES as readonly string[] }[kind];
      expect(known, `${t.family}: ${t.switch}`).toBeDefined();
      expect(known, t.family).toContain(key);
      expect(defaultsOn(t.family), t.family).toBe(false);
    }
    expect([...KNOWN_KEYS.serverFamilies].sort()).toEqual([...STREAM_FAMILY_GROUPS].sort());
    // The keys of before the budget still work.
    expect(KNOWN_KEYS.serverFamilies).toEqual(expect.arrayContaining(['tracks', 'pushes', 'input_errors', 'transcoder_tracks']));
  });

  it('keeps the default stream families of one stream within the budget, input_active reserved', () => {
    const streams = familiesOf('streams').map((f) => f.name);
    const onByDefault = FAMILY_TIERS.filter((t) => streams.includes(t.family) && t.tier !== 'optional');
    for (const t of onByDefault) expect(t.perUnit, t.family).toBeGreaterThan(0);
    // input_active (another branch) is kept its INPUT_ACTIVE_RESERVED series; the rest fit beside it.
    const perStream = (rows: typeof onByDefault) => rows.reduce((n, t) => n + t.perUnit!, 0);
    const others = onByDefault.filter((t) => t.family !== INPUT_ACTIVE);
    expect(perStream(others)).toBeLessThanOrEqual(STREAM_SERIES_BUDGET - INPUT_ACTIVE_RESERVED);
    expect(perStream(onByDefault)).toBeLessThanOrEqual(STREAM_SERIES_BUDGET);
  });

  it('puts alive, status, bitrate, clients and bytes in the core tier, never shed', () => {
    for (const f of [
      'flussonic_stream_alive',
      'flussonic_stream_status',
      'flussonic_stream_bitrate_bytes_per_second',
      'flussonic_stream_clients',
      'flussonic_stream_received_bytes_total',
      'flussonic_stream_sent_bytes_total',
    ]) {
      expect(tierOf(f).tier).toBe('core');
      expect(shedOrderOf([f])).toEqual([]);
    }
  });

  it('sheds every optional family before any default one', () => {
    const order = shedOrderOf(CATALOGUE.map((f) => f.name));
    const firstDefault = order.findIndex((f) => tierOf(f).tier === 'default');
    expect(firstDefault).toBeGreaterThan(0);
    expect(order.slice(firstDefault).every((f) => tierOf(f).tier === 'default')).toBe(true);
  });
});

describe('alert rules on the default set', () => {
  const rulesDir = join(REPO_ROOT, 'grafana/rules');
  const files = readdirSync(rulesDir).filter((f) => f.endsWith('.yml'));
  type Rule = { alert?: string; record?: string; expr: string };
  const rules: Rule[] = files.flatMap((f) => (parseYaml(readFileSync(join(rulesDir, f), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules));
  const recorded = new Map(rules.filter((r) => r.record).map((r) => [r.record!, r.expr]));
  const familyNames = CATALOGUE.map((f) => f.name).sort((a, b) => b.length - a.length);

  /** The exporter families an expression reads, through recording rules too. */
  function familiesIn(expr: string, seen = new Set<string>()): Set<string> {
    const out = new Set<string>();
    for (const [name, body] of recorded) {
      if (expr.includes(name) && !seen.has(name)) {
        seen.add(name);
        for (const f of familiesIn(body, seen)) out.add(f);
      }
    }
    const tokens = expr.match(/flussonic_[a-z0-9_]+/g) ?? [];
    for (const token of tokens) {
      const f = familyNames.find((n) => token === n || token === `${n}_bucket` || token === `${n}_sum` || token === `${n}_count`);
      if (f) out.add(f);
    }
    return out;
  }

  it('every alert reads at least one family that is on by default', () => {
    const alerts = rules.filter((r) => r.alert);
    expect(alerts.length).toBeGreaterThan(0);
    for (const a of alerts) {
      const families = [...familiesIn(a.expr)];
      if (families.length === 0) continue; // an alert on recording rules of other exporters, or on none
      expect(families.some(defaultsOn), `${a.alert}: ${families.join(', ')}`).toBe(true);
    }
  });
});
