/**
 * The receiver's compact kind table (src/events/kinds.ts) against the 23.05 OpenAPI it was
 * written from: every kind of `streamer_event1`, every field's type, every protocol.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { COMMON_FIELDS, COUNTED_KINDS, EVENT_KINDS, PROTOCOLS, SINK_ONLY } from '../../src/events/kinds.js';
import { sharedFile } from '../helpers/shared.js';

type Schema = { $ref?: string; allOf?: Schema[]; oneOf?: Schema[]; properties?: Record<string, Schema>; type?: string; format?: string; const?: string };

const path = sharedFile('flussonic-api/flussonic-public-23.05-637.json');

describe.skipIf(path === undefined)('the event kind table against the 23.05 OpenAPI', () => {
  const schemas = (JSON.parse(readFileSync(path!, 'utf8')) as { components: { schemas: Record<string, Schema> } }).components.schemas;
  const resolve = (s: Schema): Schema => (s.$ref ? resolve(schemas[s.$ref.split('/').at(-1)!]!) : s);
  const properties = (s: Schema): Record<string, Schema> => {
    const r = resolve(s);
    return Object.assign({}, r.properties ?? {}, ...(r.allOf ?? []).map(properties));
  };
  const typeOf = (s: Schema): string | undefined => {
    const r = resolve(s);
    return r.type ?? (r.allOf ? typeOf(r.allOf[0]!) : undefined);
  };

  test('lists every kind of streamer_event1, in its order', () => {
    const kinds = schemas.streamer_event1!.oneOf!.map((s) => s.$ref!.split('/').at(-1));
    expect(EVENT_KINDS).toEqual(kinds);
  });

  test('every field of a counted kind exists in its schema with the type (and format of a ranged one) the table says', () => {
    for (const [kind, fields] of Object.entries({ ...COUNTED_KINDS })) {
      const props = properties(schemas[kind]!);
      for (const [name, field] of Object.entries({ ...COMMON_FIELDS, ...fields })) {
        expect(props[name], `${kind}.${name}`).toBeDefined();
        expect(typeOf(props[name]!), `${kind}.${name}`).toBe(typeof field === 'string' ? field : field.type);
        if (typeof field !== 'string') expect(resolve(props[name]!).format, `${kind}.${name}`).toBe(field.format);
      }
    }
  });

  test('the protocols are the schema\'s, and the sink filter names only known kinds', () => {
    expect([...PROTOCOLS]).toEqual(schemas.protocol!.oneOf!.map((s) => s.const));
    for (const kind of SINK_ONLY) expect(EVENT_KINDS).toContain(kind);
  });
});
