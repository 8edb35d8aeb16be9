/** "Did you mean" for unknown config keys: the closest known key by edit distance. */

/** Levenshtein distance, small strings only (config keys). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known key closest to `key`, when it is close enough to be a plausible typo (or differs only
 * in case, dashes or underscores); undefined otherwise.
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const normal = (s: string): string => s.toLowerCase().replace(/[-_ ]/g, '');
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = normal(candidate) === normal(key) ? 0 : editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(2, Math.floor(key.length / 3));
  return bestDistance <= tolerance ? best : undefined;
}
