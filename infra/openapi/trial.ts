/**
 * Trial for #27: the request side of three routes as OpenAPI 3.1, read from the routes table and
 * from the options each entry's `api({...})` keeps on its handler, through zod-openapi; then the
 * same schemas through zod's own toJSONSchema (input side) to compare. Not the generator yet.
 *
 *   npx tsx infra/openapi/trial.ts [zod-openapi|zod] > out.json
 */
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { toJSONSchema } from 'zod/v4/core';
import { functions, type FunctionSpec, type HttpMethod } from '../../functions/table';
import type { InputSchemas } from '../../shared/platform/http/middleware';
import { SESSION_COOKIE } from '../../shared/sessions/store';

const TRIAL = ['create-order', 'get-me', 'list-programs'];

interface Entry {
  handler: { api: InputSchemas & { access: string } };
}

async function routes() {
  const specs = functions.filter((f) => TRIAL.includes(f.id));
  return Promise.all(
    specs.map(async (spec: FunctionSpec) => {
      const entry = (await import(`../../functions/${spec.id}.ts`)) as Entry;
      if (spec.trigger.kind !== 'http') throw new Error(`${spec.id} is not a route`);
      return { spec, method: spec.trigger.method.toLowerCase() as Lowercase<HttpMethod>, path: spec.trigger.path, api: entry.handler.api };
    }),
  );
}

async function viaZodOpenApi() {
  const paths: ZodOpenApiPathsObject = {};
  for (const { spec, method, path, api } of await routes()) {
    const operation: ZodOpenApiOperationObject = {
      operationId: spec.id,
      summary: spec.description,
      ...(api.access === 'public' ? { security: [] } : {}),
      // zod-openapi 5.4.6 throws on a location given as undefined (reads `_zod` of it): only the present ones.
      requestParams: {
        ...(api.params ? { path: api.params } : {}),
        ...(api.query ? { query: api.query } : {}),
        ...(api.headers ? { header: api.headers } : {}),
      },
      ...(api.body ? { requestBody: { required: true, content: { 'application/json': { schema: api.body } } } } : {}),
      // Answers are not declared by the entries yet.
      responses: { default: { description: 'Not declared yet' } },
    };
    paths[path] = { ...paths[path], [method]: operation };
  }
  return createDocument({
    openapi: '3.1.0',
    info: { title: 'Surge', version: '0.1.0', license: { name: 'UNLICENSED', identifier: 'UNLICENSED' } },
    servers: [{ url: '/' }],
    components: { securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE } } },
    security: [{ session: [] }],
    paths,
  });
}

async function viaZod() {
  const out: Record<string, Record<string, unknown>> = {};
  for (const { spec, api } of await routes()) {
    out[spec.id] = Object.fromEntries(
      (['params', 'query', 'headers', 'body'] as const).filter((part) => api[part]).map((part) => [part, toJSONSchema(api[part]!, { io: 'input', target: 'draft-2020-12' })]),
    );
  }
  return out;
}

const which = process.argv[2] ?? 'zod-openapi';
console.log(JSON.stringify(which === 'zod' ? await viaZod() : await viaZodOpenApi(), null, 2));
