/**
 * What a poll reports beyond its samples, as pure functions of its collector runs: why a run
 * failed (the reason label and message), and the one warning of a poll over its series budget,
 * naming the setting to change.
 */
import { isUpstreamError } from '../lib/errors.js';
import { upstreamFamily } from '../collect/families.js';
import { InvalidValuesError } from '../families/ranges.js';

/**
 * The one warning of a poll over its budget: what was shed or dropped and the setting to change
 * (the switches of the shed optional families, else max_series).
 */
export function overBudgetMessage(target: { readonly name: string; readonly labelName: string; readonly maxSeries: number }, shed: Record<string, Record<string, number>>, dropped: Record<string, number>): string {
  const at = `${target.labelName === 'server' ? 'servers' : 'catena'}[${target.name}]`;
  const families = Object.values(shed).flatMap((byFamily) => Object.keys(byFamily));
  const switches = [...new Set(families.map((f) => upstreamFamily(f)?.switch).filter((s) => s !== undefined))].map((s) => `${at}.${s}`);
  const parts: string[] = [];
  if (families.length > 0) parts.push(`shed whole families ${families.join(', ')}`);
  const droppedTotal = Object.values(dropped).reduce((a, b) => a + b, 0);
  if (droppedTotal > 0) parts.push(`dropped ${droppedTotal} core series`);
  const fix = switches.length > 0 ? `turn off ${switches.join(', ')} or raise ${at}.max_series` : `raise ${at}.max_series or narrow ${at}.streams`;
  return `series over ${at}.max_series (${target.maxSeries}): ${parts.join('; ')}; to export everything, ${fix}`;
}

export function describeFailure(error: unknown): { reason: string; message: string } {
  if (isUpstreamError(error) || error instanceof InvalidValuesError) return { reason: error.reason, message: error.message };
  return { reason: 'internal', message: error instanceof Error ? error.message : String(error) };
}
