/**
 * All dashboards, in the order of grafana/README.md, with the file each is written to.
 * grafana/dashboards/*.json are generated from here (`generate.ts`); a test checks that the
 * committed files equal this output.
 */
import { audienceDashboard } from './dashboards/audience.js';
import { catenaDashboard } from './dashboards/catena.js';
import { exporterDashboard } from './dashboards/exporter.js';
import { fleetDashboard } from './dashboards/fleet.js';
import { sloDashboard } from './dashboards/slo.js';
import { streamDashboard } from './dashboards/stream.js';
import { transcodersDashboard } from './dashboards/transcoders.js';
import type { Dashboard } from './board.js';

export interface DashboardFile {
  /** File name under grafana/dashboards/. */
  readonly file: string;
  readonly dashboard: Dashboard;
}

export function buildDashboards(): DashboardFile[] {
  return [
    { file: 'flussonic-fleet.json', dashboard: fleetDashboard() },
    { file: 'flussonic-stream.json', dashboard: streamDashboard() },
    { file: 'flussonic-audience.json', dashboard: audienceDashboard() },
    { file: 'flussonic-transcoders.json', dashboard: transcodersDashboard() },
    { file: 'flussonic-catena.json', dashboard: catenaDashboard() },
    { file: 'flussonic-exporter.json', dashboard: exporterDashboard() },
    { file: 'flussonic-slo.json', dashboard: sloDashboard() },
  ];
}

/** The exact text of a dashboard file: 2-space JSON and a final newline. */
export function renderDashboard(dashboard: Dashboard): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}
