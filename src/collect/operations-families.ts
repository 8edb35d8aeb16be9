/**
 * The families of the operations collector (operations.ts), in a module of their own: the serving
 * thread reads the catalogue, and operations.ts brings the Catena HTTP client with it.
 */
import { defineFamilies } from '../families/define.js';
import { BOOLEAN } from '../families/ranges.js';

const CP = ['catena', 'portal'] as const;
const CPP = ['catena', 'portal', 'package'] as const;

/** The families of a Catena target; `flussonic_catena_up` is kept by the serving thread (src/serve/self.ts). */
export const OPERATIONS_FAMILIES = defineFamilies(
  'operations',
  {
    up: { name: 'flussonic_catena_up', type: 'gauge', labels: ['catena'], range: BOOLEAN,
      help: '1 when the last poll of the operations log succeeded, else 0.' },
    operations: { name: 'flussonic_catena_operations_total', type: 'counter', labels: ['catena', 'portal', 'operation'],
      help: 'Operations observed in the operations log, by type (known types are exported from 0).' },
    created: { name: 'flussonic_catena_subscriptions_created_total', type: 'counter', labels: CPP,
      help: 'Subscriptions created (createPackageSubscriber operations).' },
    cancelled: { name: 'flussonic_catena_subscriptions_cancelled_total', type: 'counter', labels: CPP,
      help: 'Subscriptions cancelled (deletePackageSubscriber operations).' },
    billedSeconds: { name: 'flussonic_catena_billed_seconds_total', type: 'counter', labels: CPP,
      help: 'Billed subscription time in seconds: for each cancellation, its time minus the time of the matching creation.' },
    billedAmount: { name: 'flussonic_catena_billed_amount_total', type: 'counter', labels: ['catena', 'portal', 'package', 'currency'],
      help: 'Billed amount: billed seconds x the configured package price (only packages with a price).' },
    unmatched: { name: 'flussonic_catena_unmatched_cancellations_total', type: 'counter', labels: CP,
      help: 'Cancellations whose creation record was not found in the operations log.' },
    rejected: { name: 'flussonic_catena_records_rejected_total', type: 'counter', labels: ['catena', 'reason'],
      help: 'Operation records not counted, by reason: future (createdAt more than max_clock_skew ahead of the exporter\'s clock).' },
    lastOperation: { name: 'flussonic_catena_last_operation_timestamp_seconds', type: 'gauge', labels: CP,
      help: 'Unix time (createdAt) of the newest operation seen.' },
    packageInfo: { name: 'flussonic_catena_package_info', type: 'gauge', labels: ['catena', 'portal', 'package', 'name'],
      help: 'Package name (payload.packageName); value 1.' },
  },
);
