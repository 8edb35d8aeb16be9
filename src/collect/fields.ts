/**
 * Checked reading of upstream JSON values, shared by the collectors. Upstream fields arrive as
 * `unknown`: these helpers either return a value of the expected type, add a sample, or report a
 * shape problem through the SeriesWriter. Absent and null never produce a sample and are not
 * problems (the catalogue's rule).
 */
import type { FamilyDef } from '../families/define.js';
import type { SeriesWriter } from '../render/series.js';

/** The value as an object with the described fields, or undefined when it is not a JSON object. */
export function asObject<T extends object>(value: unknown): Readonly<T> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Readonly<T>) : undefined;
}

/** The value as an array, or undefined when it is not one. */
export function asArray(value: unknown): readonly unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

/** The newer field when it has a value (not absent, not null), else the older one. */
export function prefer(newer: unknown, older: unknown): unknown {
  return newer === undefined || newer === null ? older : newer;
}

/**
 * A label value from an upstream field: strings as they are, numbers as decimal text, anything
 * else (absent, null, objects) as the empty string.
 */
export function labelText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

/** A unit conversion of the catalogue. */
export type Unit = (value: number) => number;

// Divisions, not multiplications by 0.001 or 0.01: a division is correctly rounded, so 665 ms
// becomes exactly 0.665 and 48 % exactly 0.48, as a reader of the upstream value would expect.
export const asIs: Unit = (v) => v;
export const kbitPerSecondToBytes: Unit = (v) => v * 125;
export const bitsToBytes: Unit = (v) => v / 8;
export const msToSeconds: Unit = (v) => v / 1000;
export const percentToRatio: Unit = (v) => v / 100;
export const MIB = 1048576;
export const mibToBytes: Unit = (v) => v * MIB;

/**
 * Adds a numeric sample converted by `unit`. A value that is not a number (a string, a boolean,
 * an object) is recorded as a shape problem, never turned into a sample.
 */
export function addNumber(out: SeriesWriter, def: FamilyDef, labels: readonly string[], value: unknown, unit: Unit = asIs): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'number') out.add(def, labels, unit(value));
  else out.recordProblem(def, labels, value);
}

/** Adds a 1/0 sample from a boolean; any other type is a shape problem. */
export function addFlag(out: SeriesWriter, def: FamilyDef, labels: readonly string[], value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'boolean') out.add(def, labels, value);
  else out.recordProblem(def, labels, value);
}

/**
 * Adds a state set: one series per known state, 1 for the current one, 0 for the others (the
 * state label goes last). An unknown state string gives all zeros and a shape problem, so a new
 * upstream state is visible without inventing a series for it.
 */
export function addStateSet(
  out: SeriesWriter,
  def: FamilyDef,
  labels: readonly string[],
  states: readonly string[],
  value: unknown,
): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'string') {
    out.recordProblem(def, labels, value);
    return;
  }
  // One label array for all the states (add() keeps no reference to it).
  const withState = [...labels, ''];
  for (const state of states) {
    withState[labels.length] = state;
    out.add(def, withState, state === value ? 1 : 0);
  }
  if (!states.includes(value)) out.recordProblem(def, labels, value);
}

/**
 * A nested object of the response (`stats.transcoder`, `partitions[i]`): the object; nothing for
 * absent or null; a shape problem, reported under the family it would have fed, for anything else.
 */
export function objectField<T extends object>(
  out: SeriesWriter,
  def: FamilyDef,
  labels: readonly string[],
  value: unknown,
): Readonly<T> | undefined {
  if (value === undefined || value === null) return undefined;
  const object = asObject<T>(value);
  if (!object) out.recordProblem(def, labels, value);
  return object;
}

/** A nested array of the response, as objectField: empty for absent or null, a problem for a non-array. */
export function arrayField(out: SeriesWriter, def: FamilyDef, labels: readonly string[], value: unknown): readonly unknown[] {
  if (value === undefined || value === null) return [];
  const array = asArray(value);
  if (!array) out.recordProblem(def, labels, value);
  return array ?? [];
}
