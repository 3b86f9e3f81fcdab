/**
 * Requests to one operation of the OpenAPI document, for the fuzz run: valid ones built from its
 * schemas, and mutations of them, each labelled with what it changed. The mutations are those a
 * hostile or broken client sends: wrong types, fields missing or extra, huge and odd Unicode
 * strings, path parameters holding `/`, `..` and encoded bytes, wrong content types, bodies past
 * the limit.
 */
import fc, { type Arbitrary } from 'fast-check';
import { oddStrings, valueOf, type JsonSchema } from './schema-arbitrary';

export type Principal = 'nobody' | 'buyer' | 'admin';

export interface Operation {
  method: string;
  /** The API Gateway path, e.g. /items/{itemId}. */
  path: string;
  operationId: string;
  'x-surge-access'?: 'public' | 'user' | 'admin';
  parameters?: { in: 'path' | 'query' | 'header'; name: string; required?: boolean; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export interface FuzzRequest {
  as: Principal;
  method: string;
  /** The request target as sent, its path parameters and query already in it. */
  target: string;
  headers: Record<string, string>;
  body?: string;
  /** What was changed from a valid request: 'valid' when nothing. */
  mutation: string;
}

/** Who a valid request is sent as: whom the route's access asks for. */
const PRINCIPAL_OF_ACCESS = { public: 'nobody', user: 'buyer', admin: 'admin' } as const;

/** API Gateway's payload limit is 10 MB: one byte past it. */
const PAST_THE_GATEWAY_LIMIT = 10 * 1024 * 1024 + 1;

/** Path parameters sent as they are, unencoded: each either routes elsewhere or must be refused. */
const HOSTILE_SEGMENTS = fc.constantFrom(
  '/',
  '..',
  '.',
  '%2F',
  '%2e%2e',
  '%2e%2e%2f%2e%2e',
  '%00',
  'a/b',
  '%',
  '%zz',
  '%C0%AE',
  'x'.repeat(3000),
  '%F0%9F%98%80',
);

/** Header values a client can send: visible ASCII (an HTTP client refuses others before the wire). */
const headerText = fc.stringMatching(/^[\x21-\x7e]{0,300}$/);

interface Part {
  value: unknown;
  mutation?: string;
}

function pathParameter(schema: JsonSchema, known: readonly string[], document: object, mutate: boolean): Arbitrary<{ text: string; mutation?: string }> {
  const generated = valueOf(schema, document).map((value) => ({ text: encodeURIComponent(String(value)) }));
  const valid = known.length
    ? fc.oneof(
        fc.constantFrom(...known).map((text) => ({ text: encodeURIComponent(text) })),
        generated,
      )
    : generated;
  if (!mutate) return valid;
  return fc.oneof(
    { weight: 8, arbitrary: valid },
    { weight: 1, arbitrary: HOSTILE_SEGMENTS.map((text) => ({ text, mutation: 'hostile path parameter' })) },
    { weight: 1, arbitrary: oddStrings.map((text) => ({ text: encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '?')), mutation: 'odd path parameter' })) },
  );
}

/** A body's object with one field changed in a way its schema refuses, or left as it was. */
function mutatedBody(schema: JsonSchema, document: object): Arbitrary<Part> {
  const valid = valueOf(schema, document);
  return fc.oneof(
    { weight: 8, arbitrary: valid.map((value) => ({ value })) },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.nat()).map(([value, pick]) => {
        const keys = value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
        if (!keys.length) return { value: {}, mutation: 'field missing' };
        const { [keys[pick % keys.length]!]: _dropped, ...rest } = value as Record<string, unknown>;
        return { value: rest, mutation: 'field missing' };
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.string({ minLength: 1, maxLength: 20 }), fc.jsonValue({ maxDepth: 1 }))
        .map(([value, key, extra]) => ({ value: { ...(value as object), [`x${key}`]: extra }, mutation: 'extra field' })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.nat(), fc.oneof(fc.jsonValue({ maxDepth: 2 }), oddStrings, fc.constant('x'.repeat(300_000))))
        .map(([value, pick, wrong]) => {
          const keys = value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
          if (!keys.length) return { value: wrong, mutation: 'wrong body' };
          return { value: { ...(value as object), [keys[pick % keys.length]!]: wrong }, mutation: 'wrong field' };
        }),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ value, mutation: 'wrong body' })) },
  );
}

/**
 * Requests to the operation, as each principal; known ids (the demo item, deal, programs) make some
 * reach past a 404. Without `mutate`, only valid ones, as the principal its access asks for.
 */
export function requestsTo(operation: Operation, document: object, known: Record<string, readonly string[]>, mutate = true): Arbitrary<FuzzRequest> {
  const parameters = operation.parameters ?? [];
  const pathParams = parameters.filter((p) => p.in === 'path');
  const queryParams = parameters.filter((p) => p.in === 'query');
  const headerParams = parameters.filter((p) => p.in === 'header');
  const bodySchema = operation.requestBody?.content['application/json']?.schema;

  const path = fc.tuple(...pathParams.map((p) => pathParameter(p.schema, known[p.name] ?? [], document, mutate))).map((values) => {
    let target = operation.path;
    pathParams.forEach((p, i) => (target = target.replace(`{${p.name}}`, values[i]!.text)));
    return { target, mutations: values.flatMap((v) => (v.mutation ? [v.mutation] : [])) };
  });

  const query = fc
    .tuple(
      fc.tuple(...queryParams.map((p) => fc.option(valueOf(p.schema, document), { nil: undefined, freq: p.required ? 100 : 2 }))),
      // An extra parameter, one request in six.
      fc.oneof(
        { weight: 5, arbitrary: fc.constant(undefined) },
        { weight: mutate ? 1 : 0, arbitrary: fc.tuple(fc.stringMatching(/^[a-z]{1,12}$/), oddStrings) },
      ),
    )
    .map(([values, extra]) => {
      const search = new URLSearchParams();
      queryParams.forEach((p, i) => values[i] !== undefined && search.append(p.name, String(values[i])));
      if (extra) search.append(extra[0], extra[1].replace(/[\ud800-\udfff]/g, '?'));
      return { text: search.size ? `?${search}` : '', mutations: extra ? ['extra query parameter'] : [] };
    });

  const odd = mutate ? 1 : 0;
  const headers = fc.tuple(
    ...headerParams.map((p) =>
      fc.oneof(
        {
          weight: 4,
          arbitrary: valueOf(p.schema, document).map((v) => ({ value: String(v) as string | undefined, mutation: undefined as string | undefined })),
        },
        { weight: odd, arbitrary: headerText.map((v) => ({ value: v as string | undefined, mutation: `odd ${p.name}` })) },
        { weight: odd, arbitrary: fc.constant({ value: undefined as string | undefined, mutation: `no ${p.name}` }) },
      ),
    ),
  );

  const body: Arbitrary<{ text?: string; type?: string; mutation?: string }> = !mutate
    ? bodySchema
      ? valueOf(bodySchema, document).map((value) => ({ text: JSON.stringify(value), type: 'application/json' }))
      : fc.constant({})
    : bodySchema
      ? fc.oneof(
          {
            weight: 12,
            arbitrary: mutatedBody(bodySchema, document).map((part) => ({
              text: JSON.stringify(part.value),
              type: 'application/json',
              ...(part.mutation ? { mutation: part.mutation } : {}),
            })),
          },
          {
            weight: 1,
            arbitrary: fc.constantFrom('{', '{"a":', 'null', '', '\u0000', '[]').map((text) => ({ text, type: 'application/json', mutation: 'not JSON' })),
          },
          {
            weight: 1,
            arbitrary: valueOf(bodySchema, document).map((value) => ({ text: JSON.stringify(value), type: 'text/plain', mutation: 'wrong content type' })),
          },
          { weight: 1, arbitrary: fc.constant({ text: `{"x":"${'x'.repeat(600_000)}"}`, type: 'application/json', mutation: "past Surge's body limit" }) },
          {
            weight: 1,
            arbitrary: fc.constant({ text: 'x'.repeat(PAST_THE_GATEWAY_LIMIT), type: 'application/json', mutation: "past API Gateway's payload limit" }),
          },
        )
      : fc.oneof(
          { weight: 5, arbitrary: fc.constant({}) },
          {
            weight: 1,
            arbitrary: fc
              .jsonValue({ maxDepth: 1 })
              .map((value) => ({ text: JSON.stringify(value), type: 'application/json', mutation: 'a body it takes none of' })),
          },
        );

  const principals: Principal[] = !mutate ? [PRINCIPAL_OF_ACCESS[operation['x-surge-access'] ?? 'public']] : ['nobody', 'buyer', 'admin'];
  return fc.tuple(fc.constantFrom(...principals), path, query, headers, body).map(([as, p, q, h, b]) => {
    const sent: Record<string, string> = {};
    headerParams.forEach((param, i) => {
      if (h[i]!.value !== undefined) sent[param.name.toLowerCase()] = h[i]!.value!;
    });
    if (b.type) sent['content-type'] = b.type;
    const mutations = [...p.mutations, ...q.mutations, ...h.flatMap((x) => (x.mutation ? [x.mutation] : [])), ...(b.mutation ? [b.mutation] : [])];
    return {
      as,
      method: operation.method.toUpperCase(),
      target: p.target + q.text,
      headers: sent,
      ...(b.text !== undefined ? { body: b.text } : {}),
      mutation: mutations.join(', ') || 'valid',
    };
  });
}
