/**
 * fast-check arbitraries of the values a JSON Schema (OpenAPI 3.1's dialect, as zod-openapi writes
 * Surge's document) allows, for the fuzz run (test/api/fuzz.test.ts). Written here because no
 * kept library does it: json-schema-fast-check is archived, zod-fast-check reads zod 3's classic
 * API, not zod/mini 4 (and the fuzz reads the document, as a client would). It knows the keywords
 * the document uses; any other is ignored, so a value may be refused: the fuzz expects refusals.
 */
import fc, { type Arbitrary } from 'fast-check';

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

/** Strings a parser or a store might choke on: lone surrogates, NUL, right-to-left marks, zero-width joiners, HTML. */
export const oddStrings: Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    '\ud800',
    '\udfff',
    '\u202e',
    '\u200d',
    '\ufeff',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '%00',
    '../../etc/passwd',
    '😀'.repeat(50),
    'ǅ\u0301\u0301\u0301',
  ),
);

/** Formats the document names, each as a string the route's own schema would take. */
const FORMATS: Record<string, Arbitrary<string>> = {
  email: fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/), fc.stringMatching(/^[a-z]{2,10}$/)).map(([local, domain]) => `${local}@${domain}.test`),
  'date-time': fc.date({ min: new Date('1971-01-01T00:00:00Z'), max: new Date('2037-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString()),
  uuid: fc.uuid(),
  uri: fc.webUrl(),
};

function stringOf(schema: JsonSchema): Arbitrary<string> {
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern);
    // A pattern bounds the string; lengths beyond it are the schema's own (a valid value keeps both).
    return fc.stringMatching(pattern).filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Infinity));
  }
  if (schema.format && FORMATS[schema.format]) return FORMATS[schema.format]!;
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 200) });
}

function numberOf(schema: JsonSchema, integer: boolean): Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : Number.EPSILON) : undefined);
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : Number.EPSILON) : undefined);
  return integer
    ? fc.integer({ min: Math.max(min ?? -1e6, Number.MIN_SAFE_INTEGER), max: Math.min(max ?? 1e6, Number.MAX_SAFE_INTEGER) })
    : fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

/** The values a schema allows, its $refs resolved within `root` (the document). */
export function valueOf(schema: JsonSchema, root: object): Arbitrary<unknown> {
  if (schema.$ref) return valueOf(resolveRef(schema.$ref, root), root);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((alternative) => valueOf(alternative, root)));
  if (schema.allOf?.length) return valueOf(Object.assign({}, ...schema.allOf.map((part) => (part.$ref ? resolveRef(part.$ref, root) : part))), root);
  const type = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (type.length > 1) return fc.oneof(...type.map((one) => valueOf({ ...schema, type: one }, root)));
  switch (type[0]) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return numberOf(schema, true);
    case 'number':
      return numberOf(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueOf(schema.items ?? {}, root), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) });
    case 'object': {
      const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, property]) => [name, valueOf(property, root)]));
      return fc.record(properties, { requiredKeys: (schema.required ?? []).filter((name) => name in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

export function resolveRef(ref: string, root: object): JsonSchema {
  if (!ref.startsWith('#/')) throw new Error(`Only references within the document are followed: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .reduce((node: any, segment) => node?.[decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~')], root) as JsonSchema;
}
