/** YAML documents read by the exporter (config, web config, file_sd targets): the same bounds for each. */
import { isMap, isScalar, isSeq, type Document } from 'yaml';

/** The yaml library's bound on alias expansion (its default is 100, set here on purpose). */
export const MAX_ALIAS_COUNT = 100;

/** Offsets of keys that repeat an earlier key of the same mapping (scalar keys, by value), in linear time. */
export function duplicateKeys(doc: Document): number[] {
  const found: number[] = [];
  // An explicit stack: a deeply nested file must not overflow the call stack here.
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        if (isScalar(pair.key)) {
          const id = `${typeof pair.key.value}:${String(pair.key.value)}`;
          if (seen.has(id)) found.push(pair.key.range?.[0] ?? 0);
          seen.add(id);
        }
        stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    }
  }
  return found.sort((a, b) => a - b);
}
