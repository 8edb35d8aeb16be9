/**
 * Writes grafana/dashboards/*.json from the builder (see grafana/README.md):
 *
 *   npx tsc -p grafana/generator && node .tmp/grafana-generator/grafana/generator/generate.js
 *
 * With --check it writes nothing and exits 1 when a committed file differs from the output.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repositoryRoot } from './families.js';
import { buildDashboards, renderDashboard } from './index.js';

const check = process.argv.includes('--check');
const outDir = resolve(repositoryRoot(), 'grafana', 'dashboards');
let stale = 0;
for (const { file, dashboard } of buildDashboards()) {
  const path = join(outDir, file);
  const text = renderDashboard(dashboard);
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (current === text) continue;
  if (check) {
    console.error(`${path} differs from the generator output`);
    stale += 1;
  } else {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
