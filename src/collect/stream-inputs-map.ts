/**
 * Per-input families of a stream (docs/metrics-additions.md "Streams: per input"): one small pure
 * mapping called from streams-map.ts. Item in, samples out through the SeriesWriter; no I/O.
 *
 * Where the numbers are:
 * - `inputs[i].stats`: the 23.x/24.x `input_stats` schema (23.05 OpenAPI), and 2025 servers send
 *   the same place (go-flussonic `streams_list` example);
 * - `stats.inputs[i]`: the nested list (22.06 OpenAPI: deprecated, to be removed in 21.12; our
 *   simulator's nested shape serves it beside inputs[i].stats); read field by field before the
 *   flat one where a document has it. streams-map.ts does not select it (see STREAM_FIELDS).
 * The label `input` is i, 0-based, the `{index}` of `/streams/{name}/inputs/{index}` (OpenAPI
 * `stream_input_select`: integer, `minimum: 0`). An input URL never becomes a label: it may carry
 * credentials (rtsp://user:pass@...).
 */
import type { StreamFamilySwitches } from '../config/types.js';
import type { FamilyDef } from '../families/define.js';
import type { SeriesWriter } from '../render/series.js';
import { addFlag, addNumber, arrayField, msToSeconds, objectField, prefer, type Unit } from './fields.js';

/** The per-input families, declared with the other stream families (streams-map.ts STREAM_FAMILIES). */
export interface InputFamilies {
  readonly inputActive: FamilyDef;
  readonly inputReceived: FamilyDef;
  readonly inputLastFrame: FamilyDef;
  readonly inputStartTime: FamilyDef;
  readonly inputError: FamilyDef;
}

/** Runtime stats of one input (`input_stats`), flat and 2025 fields side by side. */
export interface InputStats {
  /** boolean: selected as the stream's active input. */
  readonly active?: unknown;
  /** integer: bytes received by this input instance. */
  readonly bytes?: unknown;
  /** number, Unix ms of the last frame from this input. */
  readonly last_dts_at?: unknown;
  /** number, Unix ms when the network connection was established (23.x). */
  readonly connected_at?: unknown;
  /** integer: when this input instance was created; Unix s in `input_stats` up to 23.x, Unix ms in 2025. */
  readonly opened_at?: unknown;
  /** string (23.x, deprecated, x-delete-at 23.09) or binary_value object (22.06): the last source error. */
  readonly error?: unknown;
}

/** One configured input: its runtime stats ride along in the flat shape. */
interface ConfiguredInput {
  readonly stats?: unknown;
}

/**
 * Unix time below which an `opened_at` is taken as seconds: 1e11 s is the year 5138, 1e11 ms is
 * 1973, so the two units cannot be confused for any real clock.
 */
const SECONDS_BELOW = 1e11;
const secondsOrMs: Unit = (v) => (v >= SECONDS_BELOW ? v / 1000 : v);

/**
 * Maps the inputs of one stream. `configured` is the item's `inputs`, `nested` its `stats.inputs`;
 * `flussonic_stream_input_active` is always mapped, the rest only with `families.inputs`.
 */
export function mapStreamInputs(
  out: SeriesWriter,
  F: InputFamilies,
  name: string,
  configured: unknown,
  nested: unknown,
  families: StreamFamilySwitches,
): void {
  const flatList = arrayField(out, F.inputActive, [name], configured);
  const nestedList = arrayField(out, F.inputActive, [name], nested);
  const count = Math.max(flatList.length, nestedList.length);
  for (let i = 0; i < count; i++) {
    const labels = [name, String(i)];
    const input = objectField<ConfiguredInput>(out, F.inputActive, labels, flatList[i]);
    const older = objectField<InputStats>(out, F.inputActive, labels, input?.stats);
    const newer = objectField<InputStats>(out, F.inputActive, labels, nestedList[i]);
    if (!older && !newer) continue; // a configured input the server has no runtime for (never opened)
    addFlag(out, F.inputActive, labels, prefer(newer?.active, older?.active));
    if (!families.inputs) continue;
    addNumber(out, F.inputReceived, labels, prefer(newer?.bytes, older?.bytes));
    addNumber(out, F.inputLastFrame, labels, prefer(newer?.last_dts_at, older?.last_dts_at), msToSeconds);
    const connectedAt = prefer(newer?.connected_at, older?.connected_at);
    if (connectedAt !== undefined && connectedAt !== null) addNumber(out, F.inputStartTime, labels, connectedAt, msToSeconds);
    else addNumber(out, F.inputStartTime, labels, prefer(newer?.opened_at, older?.opened_at), secondsOrMs);
    addError(out, F.inputError, labels, prefer(newer?.error, older?.error));
  }
}

/**
 * The error flag of an input that has stats: 1 for a non-empty error string or an error object,
 * 0 when there is none (absent, null or ""): for this field null is the documented "no error",
 * not a missing value. Other types are shape problems.
 */
function addError(out: SeriesWriter, def: FamilyDef, labels: readonly string[], error: unknown): void {
  if (error === undefined || error === null || error === '') out.add(def, labels, 0);
  else if (typeof error === 'string' || (typeof error === 'object' && !Array.isArray(error))) out.add(def, labels, 1);
  else out.recordProblem(def, labels, error);
}
