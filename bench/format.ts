/** Number and table formatting of the benchmark's printed output. */

export const f0 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : Math.round(n).toLocaleString('en-US'));
export const f1 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(1));
export const f2 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(2));
export const mb = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / 1048576).toFixed(2));

export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}
