/**
 * What every process of the benchmark uses to measure itself and to talk to its parent
 * (bench/child.ts), with nothing else loaded: a child that imports only this stays as small as the
 * work it measures (the scrapers and the static server of the scrape floor).
 */

/** CPU time (user + system, all threads) of this process so far, in ms. */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Peak resident set size of this process so far, in MB. */
export function maxRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Sends a message to the parent (child side) and never throws when the parent is gone. */
export function reply(message: unknown): void {
  process.send?.(message);
}

/**
 * Child side of bench/child.ts: answers each request of the parent with what `handle` resolves to
 * or the error it rejects with, then says it is ready.
 */
export function answerRequests<T>(handle: (message: T) => Promise<unknown>): void {
  process.on('message', (message: T) => {
    handle(message).then(
      (result) => reply({ ok: true, result }),
      (error: unknown) => reply({ ok: false, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
    );
  });
  reply({ ok: true, result: 'ready' });
}
