/**
 * A validator for schemas of Flussonic's published 23.05 OpenAPI (components.schemas), shared by
 * the simulator's contract tests.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { OPENAPI_23_05, SAMPLES_2025, sharedFile } from '../helpers/shared.js';

export type Schema = Record<string, unknown>;

/**
 * The file mixes OpenAPI 3.0 habits into a 3.1 document: `nullable: true` next to `allOf`, and
 * `oneOf` + `discriminator` over track variants that all accept every track. Rewrite those two
 * into plain JSON Schema with the meaning OpenAPI gives them; leave the rest as published.
 */
export function normalise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalise);
  if (node === null || typeof node !== 'object') return node;
  const src = node as Schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === 'nullable' || k === 'discriminator' || k === 'examples' || k === 'example') continue;
    out[k] = normalise(v);
  }
  const discriminator = src.discriminator as { propertyName: string; mapping?: Record<string, string> } | undefined;
  if (discriminator?.mapping && Array.isArray(out.oneOf)) {
    // A discriminator picks the variant by the value of the property: an if/then per value.
    delete out.oneOf;
    out.allOf = Object.entries(discriminator.mapping).map(([value, ref]) => ({
      if: { properties: { [discriminator.propertyName]: { const: value } }, required: [discriminator.propertyName] },
      then: { $ref: ref },
    }));
  }
  if (src.nullable === true) return { anyOf: [{ type: 'null' }, out] };
  return out;
}

export const specPath = sharedFile(OPENAPI_23_05);
export const samplesDir = sharedFile(SAMPLES_2025);

export function validatorFor(spec: Schema, name: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, validateSchema: false, logger: false });
  const components = normalise((spec.components as Schema).schemas) as Schema;
  ajv.addSchema({ $id: 'flussonic-23.05', components: { schemas: components } });
  return ajv.getSchema(`flussonic-23.05#/components/schemas/${name}`)!;
}
