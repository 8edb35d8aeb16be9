/**
 * JSON Merge Patch (RFC 7396), the upsert rule of section 4.4: members absent from the stored
 * object are added, present ones replaced, `null` removes, a non-object patch replaces the whole
 * value, arrays are replaced whole.
 */
import type { Json, JsonRecord } from './query.js';

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isRecord(patch)) return structuredClone(patch);
  const result: JsonRecord = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
