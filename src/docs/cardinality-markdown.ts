/**
 * The streams budget of docs/cardinality.md, rendered from the family declarations (tiers,
 * switches, series per stream, shedding order): the part of that page between its two markers.
 * `npm run docs:metrics` writes it; a test fails when the committed page differs.
 */
import { STREAM_FAMILIES } from '../collect/streams-map.js';
import { familyList, type FamilyDef } from '../families/define.js';

export const BEGIN_MARKER = '<!-- streams budget: generated from the family declarations by `npm run docs:metrics` -->';
export const END_MARKER = '<!-- end of the streams budget -->';

const PREFIX = 'flussonic_stream_';
/** Labels after `server, stream` that make a family one series per item, not per stream. */
const PER_ITEM: Readonly<Record<string, string>> = { track: 'track', push: 'push', input: 'input', error: 'input error kind' };

/** The item a family makes one series per (a track, a push, ...), or undefined for a per-stream family. */
function itemOf(f: FamilyDef): string | undefined {
  const extra = f.labels.slice(2).find((l) => PER_ITEM[l] !== undefined);
  return extra === undefined ? undefined : PER_ITEM[extra];
}

/** `5`, `4 per track`, `1 + 1 per input`: the series a group of families makes per stream. */
function seriesCell(families: readonly FamilyDef[]): string {
  const fixed = families.filter((f) => itemOf(f) === undefined).reduce((n, f) => n + (f.perUnit ?? 0), 0);
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
  const all = familyList(STREAM_FAMILIES);
  const shed = all.filter((f) => f.shedRank >= 0).sort((a, b) => a.shedRank - b.shedRank);
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
  const all = familyList(STREAM_FAMILIES);
  const onByDefault = all.filter((f) => f.tier !== 'optional');
  const perStream = onByDefault.filter((f) => itemOf(f) === undefined).reduce((n, f) => n + (f.perUnit ?? 0), 0);
  const kept = onByDefault.filter((f) => itemOf(f) !== undefined).reduce((n, f) => n + (f.perUnit ?? 0), 0);
  const allOn = all.filter((f) => itemOf(f) === undefined).reduce((n, f) => n + (f.perUnit ?? 0), 0);
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
      `\`input_active\`). With every switch on, a stream with a transcoder and DVR makes ${allOn} series, plus those ` +
      'per track, push, input and input error kind above.',
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
