/**
 * Subscribers and billing: what the Catena operations log says about subscriptions and what they
 * bill. Catena services are selected by the `catena` variable (their configured name), not by
 * `server`.
 */
import { dashboard, queryVariable, type Dashboard } from '../board.js';
import { barGauge, booleanMappings, q, row, sel, stat, table, timeseries } from '../panels.js';
import { datasource, job } from './variables.js';

const C = 'catena';
const P = 'portal';

export function catenaDashboard(): Dashboard {
  const byPortal = (metric: string) => sel(metric, C, P);
  return dashboard({
    uid: 'flussonic-catena',
    title: 'Flussonic / Subscribers and billing',
    description: 'Operations of the Catena operations log: operations by type, subscriptions per package, billed time and amount.',
    tags: ['catena', 'billing'],
    time: 'now-7d',
    variables: [
      datasource(),
      job(),
      queryVariable('catena', 'Catena', 'Catena service(s), by their configured name.', 'flussonic_catena_up{job=~"$job"}'),
      queryVariable(
        'portal',
        'Portal',
        'Portal(s) of the selected Catena services (portalId).',
        'flussonic_catena_operations_total{job=~"$job",catena=~"$catena"}',
      ),
    ],
    panels: [
      // Whether the exporter reads the log, and how fresh it is.
      row('Operations log'),
      stat({
        title: 'Operations log reachable',
        description: 'Whether the last poll of every selected operations log succeeded (flussonic_catena_up).',
        unit: 'none',
        w: 6,
        mappings: booleanMappings('unreachable', 'reachable'),
        thresholds: [
          { color: 'red', value: null },
          { color: 'green', value: 1 },
        ],
        queries: [q(`min(${sel('flussonic_catena_up', C)})`, 'up')],
      }),
      stat({
        title: 'Newest operation age',
        description: 'Time since the newest operation seen in the log (its createdAt).',
        unit: 'dtdurations',
        w: 6,
        graph: false,
        queries: [q(`time() - max(${byPortal('flussonic_catena_last_operation_timestamp_seconds')})`, 'age')],
      }),
      stat({
        title: 'Subscriptions created',
        description: 'Subscriptions created in the selected time range (createPackageSubscriber).',
        unit: 'short',
        w: 6,
        graph: false,
        queries: [q(`sum(increase(${byPortal('flussonic_catena_subscriptions_created_total')}[$__range]))`, 'created')],
      }),
      stat({
        title: 'Subscriptions cancelled',
        description: 'Subscriptions cancelled in the selected time range (deletePackageSubscriber).',
        unit: 'short',
        w: 6,
        graph: false,
        queries: [q(`sum(increase(${byPortal('flussonic_catena_subscriptions_cancelled_total')}[$__range]))`, 'cancelled')],
      }),

      // Operations over time.

      row('Operations'),
      timeseries({
        title: 'Operations by type',
        description: 'Operations per minute in the log, by type.',
        unit: 'cpm',
        w: 24,
        queries: [q(`60 * sum by (operation) (rate(${byPortal('flussonic_catena_operations_total')}[$__rate_interval]))`, '{{operation}}')],
      }),
      timeseries({
        title: 'Subscriptions created per package',
        description: 'Subscriptions created per minute, by package id.',
        unit: 'cpm',
        queries: [
          q(`60 * sum by (package) (rate(${byPortal('flussonic_catena_subscriptions_created_total')}[$__rate_interval]))`, 'package {{package}}'),
        ],
      }),
      timeseries({
        title: 'Subscriptions cancelled per package',
        description: 'Subscriptions cancelled per minute, by package id.',
        unit: 'cpm',
        queries: [
          q(`60 * sum by (package) (rate(${byPortal('flussonic_catena_subscriptions_cancelled_total')}[$__rate_interval]))`, 'package {{package}}'),
        ],
      }),

      // Billed time: for each cancellation, the time since the matching creation.

      row('Billing'),
      table({
        title: 'Packages in the selected range',
        description: 'Per package: its name, subscriptions created and cancelled, and billed time in the selected time range.',
        unit: 'short',
        merge: true,
        hide: ['job', 'Value #D'],
        columns: [
          { field: 'Value #A', name: 'Created' },
          { field: 'Value #B', name: 'Cancelled' },
          { field: 'Value #C', name: 'Billed time', unit: 'dtdurations' },
        ],
        queries: [
          q(`sum by (catena, portal, package) (increase(${byPortal('flussonic_catena_subscriptions_created_total')}[$__range]))`),
          q(`sum by (catena, portal, package) (increase(${byPortal('flussonic_catena_subscriptions_cancelled_total')}[$__range]))`),
          q(`sum by (catena, portal, package) (increase(${byPortal('flussonic_catena_billed_seconds_total')}[$__range]))`),
          q(`max by (catena, portal, package, name) (${byPortal('flussonic_catena_package_info')})`),
        ],
      }),
      barGauge({
        title: 'Billed time per package',
        description: 'Billed subscription time in the selected time range, by package id.',
        unit: 'dtdurations',
        queries: [q(`sum by (package) (increase(${byPortal('flussonic_catena_billed_seconds_total')}[$__range]))`, 'package {{package}}')],
      }),
      barGauge({
        title: 'Billed amount per package',
        description:
          'Billed amount in the selected time range, by package id and currency (only packages with a price in the exporter configuration).',
        unit: 'short',
        queries: [
          q(`sum by (package, currency) (increase(${byPortal('flussonic_catena_billed_amount_total')}[$__range]))`, 'package {{package}} {{currency}}'),
        ],
      }),
      timeseries({
        title: 'Billed amount per hour',
        description: 'Billed amount per hour, by currency (only packages with a price in the exporter configuration).',
        unit: 'short',
        queries: [q(`3600 * sum by (currency) (rate(${byPortal('flussonic_catena_billed_amount_total')}[$__rate_interval]))`, '{{currency}}')],
      }),
      timeseries({
        title: 'Unmatched cancellations',
        description: 'Cancellations per minute whose creation record was not found in the log (not billed).',
        unit: 'cpm',
        queries: [q(`60 * sum by (portal) (rate(${byPortal('flussonic_catena_unmatched_cancellations_total')}[$__rate_interval]))`, 'portal {{portal}}')],
      }),
    ],
  });
}
