/**
 * The kinds of values a setting can have, each a zod schema that checks and converts one YAML
 * value (durations to ms, sizes to bytes, `*_file` secrets to their text) and says what is wrong
 * in the project's words. A problem is said through a `Say`, given the value as it may be shown:
 * issues.ts hides secrets and values that came from `${VAR}`.
 */
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { DURATION_PATTERN, formatDuration, parseByteSize, parseDuration } from '../lib/units.js';
import type { PathSegment } from './path.js';
import { MAX_SECRET_BYTES, readFileCapped } from '../lib/read-capped.js';
import { compileNamePattern } from '../lib/name-pattern.js';

export type Say = (shown: string, input: unknown) => string;
/** The words of a schema's (or a check's) own issue. */
export const SAY = new WeakMap<object, Say>();
/** String schemas whose values are never shown (a number in them is refused: it could be the secret). */
export const SECRET = new WeakSet<object>();

/** Registers how the schema's type problem (`typeSay`) and its checks' problems are said. */
function leaf<T extends z.ZodType>(schema: T, typeSay?: Say, checkSay?: Say): T {
  if (typeSay) SAY.set(schema, typeSay);
  if (checkSay) for (const check of schema._zod.def.checks ?? []) SAY.set(check, checkSay);
  return schema;
}

type Issues = { issues: z.core.$ZodRawIssue[] };
/** Records a problem of a value (at `path` below the schema) and returns zod's "no value". */
export function fail(ctx: Issues, input: unknown, say: Say, path: PathSegment[] = []): never {
  ctx.issues.push({ code: 'custom', input, path, params: { say } } as z.core.$ZodRawIssue);
  return z.NEVER;
}

/** A check of a whole mapping that runs also when some of its values are wrong, so every problem is seen at once. */
export function always(check: (value: Record<string, unknown>, ctx: Issues) => void): z.core.$ZodCheck<unknown> {
  return z.superRefine<unknown>((value, ctx) => (isMapping(value) ? check(value, ctx as unknown as Issues) : undefined), { when: () => true });
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A YAML mapping with exactly these keys; a key set to null (`key:`) counts as absent. Of each
 * pair in `eitherOr` (a secret inline or in a file) one may be set: the file is not read when both are.
 */
export function mapping<S extends z.core.$ZodLooseShape>(shape: S, eitherOr: readonly (readonly [string, string])[] = []) {
  return z.preprocess((v, ctx) => {
    if (!isMapping(v)) return v ?? {};
    const out = Object.fromEntries(Object.entries(v).filter(([, x]) => x != null));
    for (const [inline, file] of eitherOr) {
      if (out[inline] === undefined || out[file] === undefined) continue;
      fail(ctx, undefined, () => `set either ${inline} or ${file}, not both`, [file]);
      delete out[file];
    }
    return out;
  }, z.strictObject(shape));
}

/** A sub-mapping whose absence means its defaults. */
export const section = <S extends z.core.$ZodLooseShape>(shape: S) => mapping(shape).prefault({});

/** A non-empty string; a number stands for its text (`name: 42`). */
export const text = () => z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().min(1));

const secretString = () => {
  const s = z.string().min(1);
  SECRET.add(s);
  return s;
};
const NO_BREAKS: Say = () => 'must not contain line breaks or NUL characters';
const oneLine = (s: string, ctx: Issues): string => (/[\r\n\0]/.test(s) ? fail(ctx, s, NO_BREAKS) : s);

/** A secret given inline: never shown. */
export const secret = () => secretString().transform(oneLine).meta({ title: 'secret' });

/** A secret in a file (relative to the config's directory), read now; trailing newlines are trimmed. */
export const secretFile = (baseDir: string) =>
  text()
    .transform((file, ctx) => {
      const path = isAbsolute(file) ? file : resolve(baseDir, file);
      const read = readFileCapped(path, MAX_SECRET_BYTES);
      if (!read.ok) return fail(ctx, file, () => `cannot read ${path} (${read.reason})`);
      const value = read.text.replace(/[\r\n]+$/, '');
      return value === '' ? fail(ctx, file, () => `${path} is empty`) : oneLine(value, ctx);
    })
    .meta({ title: 'file path' });

export const bool = () => leaf(z.boolean(), (shown) => `expected true or false, got ${shown}`);

export const int = (min: number, max: number) =>
  leaf(z.int().min(min).max(max), (shown) => `expected an integer, got ${shown}`, (_, input) => `must be between ${min} and ${max}, got ${String(input)}`);

export const num = (min: number) =>
  leaf(z.number().min(min), (shown) => `expected a number, got ${shown}`, (_, input) => `must be at least ${min}, got ${String(input)}`);

const notDuration: Say = (shown, input) => `${shown} is not a duration${typeof input === 'number' ? ' (add a unit)' : ''}: use a number with a unit, e.g. 500ms, 15s, 2m, 1h`;

/** A duration in ms (`500ms`, `15s`, `2m`, `1h`, `30d`, `1h30m`), at least `minMs`. */
export const duration = (minMs: number) =>
  leaf(z.string(), notDuration)
    .transform((value, ctx) => {
      const ms = parseDuration(value);
      if (ms === undefined) return fail(ctx, value, notDuration);
      return ms < minMs ? fail(ctx, value, (shown) => `must be at least ${minMs}ms, got ${shown}`) : ms;
    })
    .meta({ title: 'duration', pattern: DURATION_PATTERN, ...(minMs > 1 ? { 'x-minimum': formatDuration(minMs) } : {}) });

/** A byte size (`64MiB`, `500KB` = 500,000, `1048576`), at least `min`. */
export const size = (min: number, minText: string) =>
  z
    .unknown()
    .transform((value, ctx) => {
      const bytes = parseByteSize(value);
      if (bytes === undefined || bytes < min) return fail(ctx, value, (shown) => `${shown} is not a size of at least ${minText} (e.g. 64MiB, 500KB, 1048576)`);
      return bytes;
    })
    .meta({ title: 'size', type: ['string', 'integer'], 'x-minimum': minText });

/** A string that must pass `test` (else `say`), converted by `to`. */
export const shaped = <T = string>(test: (s: string) => boolean, say: Say, to: (s: string) => T = (s) => s as T) =>
  text().transform((s, ctx) => (test(s) ? to(s) : fail(ctx, s, say)));

/** An http(s) base URL without credentials, query or fragment, without a trailing slash. Never shown. */
export const baseUrl = (credentialHint: string) =>
  secretString()
    .transform((text, ctx) => {
      const problem = urlProblem(text, credentialHint);
      if (typeof problem === 'string') return fail(ctx, text, () => problem);
      return `${problem.origin}${problem.pathname.replace(/\/+$/, '')}`;
    })
    .meta({ title: 'URL' });

export function urlProblem(text: string, credentialHint: string): URL | string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return 'not an http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `not an http(s) URL (scheme ${url.protocol.replace(/:$/, '')} is not supported)`;
  if (url.username !== '' || url.password !== '') return `must not contain credentials; ${credentialHint}`;
  if (url.search !== '' || url.hash !== '') return 'must not have a query string or fragment';
  return url;
}

/** A regex matched against whole names, by RE2's rules (regex.ts). */
export const namePattern = () =>
  text()
    .transform((source, ctx) => {
      const re = compileNamePattern(source);
      return typeof re === 'string' ? fail(ctx, source, () => `invalid regular expression: ${re}`) : { source };
    })
    .meta({ title: 'RE2 regex' });

/** A path relative to the config's directory, made absolute. */
export const filePath = (baseDir: string) => text().transform((p) => (isAbsolute(p) ? p : resolve(baseDir, p))).meta({ title: 'file path' });

/** A listed value a schema cannot hold twice. */
export const unique = <T>(say: (item: T) => string) =>
  z.superRefine<T[]>((items, ctx) => items.forEach((item, i) => (items.indexOf(item) < i ? fail(ctx, item, () => say(item), [i]) : undefined)));

/**
 * Names unique within each group of lists (one namespace per group), reported at the later entry;
 * `fallback` names an entry that has none.
 */
export const uniqueNames = (groups: readonly (readonly string[])[], say: (name: string, earlier: string) => string, fallback?: (list: string, i: number) => string) =>
  always((v, ctx) => {
    for (const lists of groups) {
      const seen = new Map<string, string>();
      for (const list of lists) {
        (Array.isArray(v[list]) ? (v[list] as unknown[]) : []).forEach((entry, i) => {
          const name = (isMapping(entry) ? entry.name : undefined) ?? fallback?.(list, i);
          if (typeof name !== 'string' || name === '') return;
          const earlier = seen.get(name);
          if (earlier !== undefined) fail(ctx, name, () => say(name, earlier), [list, i, 'name']);
          else seen.set(name, `${list}[${i}]`);
        });
      }
    }
  });

export const typed = <T extends z.ZodType>(schema: T, say: Say) => leaf(schema, say);

/**
 * A setting's help text and example for config.schema.json and docs/configuration.md
 * (`x-example`, not `examples`: zod drops `examples` from the input side of a transform).
 */
export const help = (description: string, example?: unknown) => ({ description, ...(example !== undefined ? { 'x-example': example } : {}) });

/** A section of on/off switches, each with its default and its help. */
export const switches = <K extends string>(defaults: Readonly<Record<K, boolean>>, about: (key: K) => string) =>
  section(Object.fromEntries(Object.entries(defaults).map(([key, on]) => [key, bool().default(on as boolean).meta(help(about(key as K)))])) as Record<K, z.ZodDefault<z.ZodBoolean>>);
