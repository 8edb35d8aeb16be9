/**
 * The demo is what users get: `node dist/main.js --demo` (the default settings, no switch turned
 * on), scraped every second by a real Prometheus with grafana/rules loaded, once per stats shape
 * (nested: Flussonic 2025 and later; flat: 23.x/24.x). Every panel of every dashboard either shows
 * data, or says in its description why not: the switch it needs (`families.X: true`,
 * `collectors.X: true`) or the stats generation that fills it. A panel whose description says it
 * needs a switch (or only 2025 servers fill it) must then be empty here: the notes cannot lie.
 * Each shape prints the panels with data and the empty ones with their notes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinary } from '../helpers/promtool.js';
import { allPanels, loadDashboards, RULES_DIR } from './artifacts.js';
import { demoMode, resultSize, startDemoStack, waitForScrapesAndRules, type DemoStack } from './harness.js';
import { substituteVariables } from './promql.js';
import { variableValues } from './variables.js';

const JOB = 'flussonic-exporter';
const SHAPES = ['nested', 'flat'] as const;
type Shape = (typeof SHAPES)[number];
const INTERVALS = { __rate_interval: '4s', __interval: '2s', __range: '1m' };
const SCRAPES = 10;

/** A switch note of the generator (grafana/generator/panels.ts needsNote): every query needs it. */
const NEEDS_ALL = /\bNeeds (?:the `\w+` collector: )?`(?:families|collectors|events)\.\w+: true`/;
/** The one switch the demo turns on beyond the defaults: it wires the simulator's event sink to the exporter. */
const ON_IN_DEMO = /`events\.enabled: true`/;
const NEEDS_SOME = /\b(?:Needs|Some series need) (?:the `\w+` collector: )?`(?:families|collectors|events)\.\w+: true`/;
/** The generation notes (panels.ts): who fills the panel, and which servers leave it empty. */
const EMPTY_ON: Readonly<Record<Shape, RegExp>> = {
  flat: /23\.x\/24\.x servers leave (?:this|some series) empty/,
  nested: /Flussonic 2025 and later servers leave (?:this|some series) empty/,
};
const ALL_EMPTY_ON: Readonly<Record<Shape, RegExp>> = {
  flat: /23\.x\/24\.x servers leave this empty/,
  nested: /Flussonic 2025 and later servers leave this empty/,
};

const prometheusPath = findBinary('prometheus');
const demo = demoMode();
if (!demo.ok) console.warn(`skipping the demo-defaults test: ${demo.reason}`);

for (const shape of SHAPES) {
  describe.skipIf(!prometheusPath || !demo.ok)(`the demo on the default settings, scraped by a real Prometheus (${shape} stats shape)`, () => {
    let stack: DemoStack | undefined;

    beforeAll(async () => {
      if (!demo.ok) return;
      stack = await startDemoStack(demo.main, prometheusPath!, shape, JOB, `${RULES_DIR}/*.rules.yml`);
      const api = stack.api;
      await waitForScrapesAndRules(api, JOB, SCRAPES);
    }, 60_000);

    afterAll(async () => {
      await stack?.stop();
    }, 20_000);

    it('every panel has data, or its description names the switch or the stats generation it needs', async () => {
      const api = stack!.api;
      const withData: string[] = [];
      const empty: string[] = [];
      const failures: string[] = [];
      for (const { dashboard } of loadDashboards()) {
        const values = await variableValues(api, dashboard, INTERVALS);
        for (const panel of allPanels(dashboard).filter((p) => (p.targets ?? []).length > 0)) {
          let hasData = false;
          for (const target of panel.targets!) {
            const r = await api.query(substituteVariables(target.expr, values));
            if (r.status !== 'success') failures.push(`${dashboard.uid}: ${panel.title} / ${target.refId}: ${r.errorType}: ${r.error}`);
            else if (resultSize(r.data) > 0) hasData = true;
          }
          const name = `${dashboard.uid}: ${panel.title}`;
          const description = panel.description ?? '';
          if (hasData) {
            withData.push(name);
            if (NEEDS_ALL.test(description) && !ON_IN_DEMO.test(description)) failures.push(`${name}: has data on the default settings, yet its description says it needs a switch`);
            if (ALL_EMPTY_ON[shape].test(description)) failures.push(`${name}: has data on the ${shape} shape, yet its description says such servers leave it empty`);
          } else {
            const why = [description.match(NEEDS_SOME)?.[0], description.match(EMPTY_ON[shape])?.[0]].filter(Boolean);
            empty.push(`  ${name}: ${why.join('; ') || 'NO REASON'}`);
            if (why.length === 0) failures.push(`${name}: no data on the default settings (${shape}) and its description names no switch or stats generation`);
          }
        }
      }
      console.log(
        `demo defaults (${shape}): panels with data ${withData.length} / ${withData.length + empty.length}\n` +
          `with data:\n${withData.map((p) => `  ${p}`).join('\n')}\nempty:\n${empty.join('\n') || '  none'}`,
      );
      expect(failures).toEqual([]);
      expect(withData.length).toBeGreaterThan(0);
    }, 60_000);
  });
}
