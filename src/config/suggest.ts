/** "Did you mean" for unknown config keys: the closest known key by edit distance. */

/** Levenshtein distance, small strings only (config keys). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known key closest to `key` (the first of equals), when it is close enough to be a plausible
 * typo (or differs only in case, dashes or underscores); undefined otherwise.
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  if (key.length > 64) return undefined; // no typo, and edit distance is quadratic in the length
  const normal = (s: string): string => s.toLowerCase().replace(/[-_ ]/g, '');
  const distance = (candidate: string): number => (normal(candidate) === normal(key) ? 0 : editDistance(key.toLowerCase(), candidate.toLowerCase()));
  // sort() is stable: of candidates equally close, the first listed wins.
  const [best] = known.map((candidate) => ({ candidate, distance: distance(candidate) })).sort((a, b) => a.distance - b.distance);
  return best && best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.candidate : undefined;
}
