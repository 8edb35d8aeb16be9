/**
 * METRICS.md, rendered from the catalogue in code (the union of the family declarations). `npm run docs:metrics` writes it; a test fails
 * when the committed file differs from this rendering, so the docs cannot drift from the code.
 */
import { SERVER_STATUSES } from '../collect/server.js';
import { SESSION_DURATION_BUCKETS } from '../collect/sessions.js';
import { STREAM_STATUSES } from '../collect/streams-map.js';
import type { FamilyDef, FamilyOwner } from '../families/define.js';
import { SESSION_GROUP_BY_ALLOWED, SESSION_GROUP_BY_DEFAULT } from '../config/switches.js';
import { CATALOGUE } from '../serve/catalogue.js';

const SECTIONS: readonly { readonly owner: FamilyOwner; readonly title: string; readonly intro: string }[] = [
  {
    owner: 'self',
    title: 'Exporter self-metrics (always on)',
    intro: '`collector` is one of `streams`, `sessions`, `server`, `dvrs`, `cluster`, `operations`; `endpoint` is the API path template (`/streams`, `/sessions`, `/config/stats`, `/dvrs`, `/operations`).',
  },
  {
    owner: 'server',
    title: 'Server (collector `server`: GET /config/stats)',
    intro: `\`flussonic_server_status\` is a state set over ${codeList(SERVER_STATUSES)}. Transcoder devices (GPUs) come from \`transcoder_devices[]\` of the same response; \`device\` is the device id.`,
  },
  {
    owner: 'streams',
    title: 'Streams (collector `streams`: GET /streams)',
    intro: `\`stream\` is the stream name. \`flussonic_stream_status\` is a state set over ${codeList(STREAM_STATUSES)}. Per-stream families follow the \`streams: {include, exclude}\` filter; tracks, pushes, input errors and transcoder tracks can be switched off per server (\`families:\`).`,
  },
  {
    owner: 'sessions',
    title: 'Sessions (collector `sessions`: GET /sessions, aggregated)',
    intro: `No per-session series. The grouping labels are configured per server (\`sessions: {group_by: [...]}\`, default ${codeList(SESSION_GROUP_BY_DEFAULT)}; allowed ${codeList(SESSION_GROUP_BY_ALLOWED)}). A session that opened and closed between two polls is not seen. Duration buckets (seconds): ${SESSION_DURATION_BUCKETS.join(', ')}.`,
  },
  { owner: 'dvrs', title: 'DVR storages (collector `dvrs`: GET /dvrs)', intro: 'Only where the server reports storage stats; absent stats produce no samples.' },
  {
    owner: 'cluster',
    title: 'Cluster view (collector `cluster`, off by default: GET /cluster/peers)',
    intro: 'The peers the server sees in its cluster, labelled `peer` by the peer hostname. The peer `cluster_key`, `license_txt` and URLs are never exported.',
  },
  {
    owner: 'operations',
    title: 'Subscriber operations log (collector `operations`: Catena GET /tv-management/api/v1/operations)',
    intro: '`catena` is the configured name of the service, `portal` the `portalId`, `package` the `packageId`.',
  },
  {
    owner: 'events',
    title: 'Events (the event sink receiver, `events.enabled`: POST /events/<server>)',
    intro: 'Counted from the events Flussonic pushes (docs/events.md), resent events once; exported by the replica that received them. `stream` is capped like the polled families\' so the two join.',
  },
];

function codeList(values: readonly string[]): string {
  return values.map((v) => `\`${v}\``).join(', ');
}

function labelCell(family: FamilyDef): string {
  const labels = family.labels.map((l) => `\`${l}\``);
  if (family.groupByLabels) labels.push('*group_by labels*');
  return labels.length > 0 ? labels.join(', ') : '(none)';
}

function typeCell(family: FamilyDef): string {
  return family.type === 'histogram' ? 'histogram (`_bucket`, `_sum`, `_count`)' : family.type;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function renderMetricsMarkdown(catalogue: readonly FamilyDef[] = CATALOGUE): string {
  const lines: string[] = [
    '# Metrics of flussonic-exporter',
    '',
    '<!-- Generated from the family declarations (src/serve/catalogue.ts) by `npm run docs:metrics`. Do not edit: a test fails when this file is stale. -->',
    '',
    `${catalogue.length} metric families. Conventions: one prefix \`flussonic_\`; base units (seconds, bytes, ratios 0..1, celsius);`,
    'counters end in `_total`; `server` is the configured name of the Flussonic server, on every upstream series;',
    'a field absent or null in the API response produces no sample; series of a server whose poll failed are',
    'withdrawn and `flussonic_up{server}` is 0. How many series to expect: [docs/cardinality.md](docs/cardinality.md).',
  ];
  for (const section of SECTIONS) {
    const families = catalogue.filter((f) => f.owner === section.owner);
    if (families.length === 0) continue;
    lines.push('', `## ${section.title}`, '', section.intro, '', '| name | type | labels | meaning |', '|---|---|---|---|');
    for (const f of families) lines.push(`| \`${f.name}\` | ${typeCell(f)} | ${labelCell(f)} | ${escapeCell(f.help)} |`);
  }
  lines.push('');
  return lines.join('\n');
}
