/**
 * The streams budget of docs/cardinality.md, rendered from the family declarations (tiers,
 * switches, series per stream, shedding order): the part of that page between its two markers.
 * `npm run docs:metrics` writes it; a test fails when the committed page differs.
 */
import { STREAM_FAMILIES } from '../collect/streams-map.js';
import { EVENT_FAMILIES } from '../events/families.js';
import { familyList, STATS_SHAPES, type FamilyDef } from '../families/define.js';

/** The per-stream families: the polled ones, then the event sink's (labels `server, stream, ...`). */
const streamFamilies = (): FamilyDef[] => [...familyList(STREAM_FAMILIES), ...familyList(EVENT_FAMILIES).filter((f) => f.labels[1] === 'stream')];

/**
 * Series per stream of these families at most: a stream's server has one stats shape, so a family
 * of the other shape makes none (`retries_total` on 23.x/24.x, `input_switches_total` on 2025).
 */
function perStreamMax(families: readonly FamilyDef[]): number {
  return Math.max(...STATS_SHAPES.map((shape) => families.filter((f) => f.shapes.includes(shape)).reduce((n, f) => n + (f.perUnit ?? 0), 0)));
}

export const BEGIN_MARKER = '<!-- streams budget: generated from the family declarations by `npm run docs:metrics` -->';
export const END_MARKER = '<!-- end of the streams budget -->';

const PREFIX = 'flussonic_stream_';
/** Labels after `server, stream` that make a family one series per item, not per stream. */
const PER_ITEM: Readonly<Record<string, string>> = { track: 'track', push: 'push', input: 'input', error: 'input error kind', proto: 'protocol' };

/** The item a family makes one series per (a track, a push, ...), or undefined for a per-stream family. */
function itemOf(f: FamilyDef): string | undefined {
  const extra = f.labels.slice(2).find((l) => PER_ITEM[l] !== undefined);
  return extra === undefined ? undefined : PER_ITEM[extra];
}

/** `5`, `4 per track`, `1 + 1 per input`: the series a group of families makes per stream. */
function seriesCell(families: readonly FamilyDef[]): string {
  const fixed = perStreamMax(families.filter((f) => itemOf(f) === undefined));
  const perItem = new Map<string, number>();
  for (const f of families) {
    const item = itemOf(f);
    if (item !== undefined) perItem.set(item, (perItem.get(item) ?? 0) + 1);
  }
  const parts = [...(fixed > 0 ? [String(fixed)] : []), ...[...perItem].map(([item, n]) => `${n} per ${item}`)];
  return parts.join(' + ');
}

/** Consecutive families of the shedding order with the same tier and switch, then the core ones. */
function rows(): FamilyDef[][] {
  const all = streamFamilies();
  // The polled families' shedding order, the event families' after them, optional before default.
  const order = (f: FamilyDef) => (f.tier === 'default' ? 2 : 0) + (f.owner === 'events' ? 1 : 0);
  const shed = all.filter((f) => f.shedRank >= 0).sort((a, b) => order(a) - order(b) || a.shedRank - b.shedRank);
  const out: FamilyDef[][] = [];
  for (const f of shed) {
    const last = out.at(-1);
    if (last && last[0]!.tier === f.tier && last[0]!.switch === f.switch) last.push(f);
    else out.push([f]);
  }
  out.push(all.filter((f) => f.shedRank < 0));
  return out;
}

export function renderStreamsBudget(): string {
  const all = streamFamilies();
  const onByDefault = all.filter((f) => f.tier !== 'optional');
  const perStream = perStreamMax(onByDefault.filter((f) => itemOf(f) === undefined));
  const kept = onByDefault.filter((f) => itemOf(f) !== undefined).reduce((n, f) => n + (f.perUnit ?? 0), 0);
  const allOn = perStreamMax(all.filter((f) => itemOf(f) === undefined));
  const lines = [
    BEGIN_MARKER,
    '',
    `| family (\`${PREFIX}...\`) | per stream | tier | switch |`,
    '|---|---|---|---|',
    ...rows().map((group) => {
      const names = group.map((f) => `\`${f.name.slice(PREFIX.length)}\``).join(', ');
      const sw = group[0]!.switch ? `\`${group[0]!.switch}\`` : '';
      return `| ${names} | ${seriesCell(group)} | ${group[0]!.tier} | ${sw} |`;
    }),
    '',
    `**Default: at most ${perStream} + ${kept} = ${perStream + kept} series per stream** (${kept} kept for the inputs' ` +
      `\`input_active\`; a server reports \`retries_total\` or \`input_switches_total\`, by its stats shape). With every switch on, a stream with a transcoder and DVR makes ${allOn} series, plus those ` +
      'per track, push, input, input error kind and protocol above.',
    '',
    END_MARKER,
  ];
  return lines.join('\n');
}

/** The page with its streams budget section replaced by the current rendering. */
export function withStreamsBudget(page: string): string {
  const begin = page.indexOf(BEGIN_MARKER);
  const end = page.indexOf(END_MARKER);
  if (begin < 0 || end < begin) throw new Error('docs/cardinality.md: the streams budget markers are missing');
  return `${page.slice(0, begin)}${renderStreamsBudget()}${page.slice(end + END_MARKER.length)}`;
}
