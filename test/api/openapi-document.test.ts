import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functions, inFlightCeiling, type FunctionSpec } from '../../functions/table';
import { openApiDocument } from '../../infra/openapi/document';
import { stackErrors, type RouteOptions } from '../../shared/api/api';
import { errorStatus } from '../../shared/platform/errors';
import * as z from '../../shared/platform/zod';

/*
 * The document is held to the table and to the entries themselves, read here on their own (not
 * through the generator's reading of them), so a route it leaves out or describes otherwise fails.
 */

type Operation = {
  operationId: string;
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { headers?: Record<string, { required?: boolean }>; content?: Record<string, { schema: JsonSchema }> }>;
  security?: unknown[];
  'x-surge-access'?: string;
};
type JsonSchema = { anyOf?: JsonSchema[]; $ref?: string; properties?: Record<string, JsonSchema>; enum?: string[] };

interface TableRoute {
  spec: FunctionSpec;
  method: string;
  path: string;
  api: RouteOptions;
}

/** The table's routes, each with the options its entry's api() keeps. */
async function tableRoutes(): Promise<TableRoute[]> {
  const routes = functions.flatMap((spec) =>
    spec.trigger.kind === 'http' ? [{ spec, method: spec.trigger.method.toLowerCase(), path: spec.trigger.path }] : [],
  );
  return Promise.all(
    routes.map(async (route) => {
      const { handler } = (await import(`../../functions/${route.spec.id}.ts`)) as { handler: { api: RouteOptions } };
      return { ...route, api: handler.api };
    }),
  );
}

const namesOf = (schema: z.ZodMiniType | undefined) => Object.keys((schema as unknown as { shape?: object } | undefined)?.shape ?? {}).sort();
const operationOf = (document: { paths?: object }, route: TableRoute) =>
  (document.paths as Record<string, Record<string, Operation>> | undefined)?.[route.path]?.[route.method];
/** The schemas an answer's content allows: its own, or each of its anyOf. */
const alternatives = (schema: JsonSchema | undefined): JsonSchema[] => (schema?.anyOf ? schema.anyOf : schema ? [schema] : []);
/** A schema as zod itself renders it, to hold zod-openapi's rendering to. */
const rendered = (schema: z.ZodMiniType) => {
  const { $schema, ...json } = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12' }) as Record<string, unknown>;
  return json;
};

describe('the OpenAPI document', () => {
  it('has every route of the table and nothing else, each with its method, path, id and parameters', async () => {
    // Prepare
    const routes = await tableRoutes();

    // Act
    const document = await openApiDocument();

    // Assess
    const described = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Record<string, Operation>).map(([method, operation]) => `${method} ${path} ${operation.operationId}`),
    );
    expect(described.sort()).toEqual(routes.map((route) => `${route.method} ${route.path} ${route.spec.id}`).sort());
    for (const route of routes) {
      const operation = operationOf(document, route)!;
      const named = (where: string) =>
        (operation.parameters ?? [])
          .filter((p) => p.in === where)
          .map((p) => p.name)
          .sort();
      const inTemplate = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).sort();
      expect({ id: route.spec.id, path: named('path'), query: named('query'), header: named('header') }).toEqual({
        id: route.spec.id,
        path: inTemplate,
        query: namesOf(route.api.query),
        header: namesOf(route.api.headers),
      });
      expect(namesOf(route.api.params)).toEqual(inTemplate);
      expect((operation.parameters ?? []).filter((p) => p.in === 'path').every((p) => p.required)).toBe(true);
      expect(Boolean(operation.requestBody), route.spec.id).toBe(Boolean(route.api.body));
    }
  });

  it('groups every operation under one capability, each capability declared with what it holds, none empty', async () => {
    // Act
    const document = await openApiDocument();

    // Assess
    const declared = (document.tags ?? []).map((tag) => tag.name);
    const used = Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { tags?: string[] }>).map((operation) => operation.tags ?? []),
    );
    expect(used.filter((tags) => tags.length !== 1 || !declared.includes(tags[0]!))).toEqual([]);
    expect(new Set(used.flat())).toEqual(new Set(declared));
    expect((document.tags ?? []).every((tag) => Boolean(tag.description))).toBe(true);
    expect(declared).toEqual(expect.arrayContaining(['Orders', 'Waiting room', 'Coupons', 'Catalog', 'Sessions', 'Newsletters', 'Operations']));
  });

  it("has each route's answers: its successes with their schemas, and every error code it can give under its status", async () => {
    // Prepare
    const routes = await tableRoutes();

    // Act
    const document = await openApiDocument();

    // Assess
    for (const route of routes) {
      const { responses } = operationOf(document, route)!;
      for (const [status, schema] of Object.entries(route.api.answers)) {
        const content = responses[status]?.content?.[route.api.answerMedia ?? 'application/json']?.schema;
        if (schema) expect(alternatives(content), `${route.spec.id} ${status}`).toContainEqual(rendered(schema));
        else expect(responses[status], `${route.spec.id} ${status}`).toEqual(expect.objectContaining({ description: expect.any(String) }));
      }
      for (const code of new Set([...route.api.errors, ...stackErrors(route.api)])) {
        const status = String(errorStatus(code));
        const codes = alternatives(responses[status]?.content?.['application/json']?.schema).flatMap((s) => s.properties?.error?.properties?.code?.enum ?? []);
        expect(codes, `${route.spec.id} ${code}`).toContain(code);
      }
      expect(responses['503']?.headers?.['Retry-After'], route.spec.id).toBeDefined();
      if (route.api.errors.includes('RATE_LIMITED')) expect(responses['429']?.headers?.['Retry-After'], route.spec.id).toBeDefined();
      expect(alternatives(responses['429']?.content?.['application/json']?.schema), route.spec.id).toContainEqual({
        $ref: '#/components/schemas/GatewayMessage',
      });
      // Past a function's ceiling Lambda throttles it, and API Gateway answers 500; no other route answers one.
      const throttledAnswer = alternatives(responses['500']?.content?.['application/json']?.schema);
      if (inFlightCeiling(route.spec) === undefined) expect(responses['500'], route.spec.id).toBeUndefined();
      else expect(throttledAnswer, route.spec.id).toEqual([{ $ref: '#/components/schemas/GatewayMessage' }]);
    }
  });

  it("passes redocly's lint with the project's rules (redocly.yaml), warnings included", async () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'surge-openapi-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(await openApiDocument()));

    // Act: exits non-zero on an error, and lists warnings on stdout while exiting 0.
    const lint = () =>
      execFileSync('node_modules/.bin/redocly', ['lint', file, '--config', 'redocly.yaml', '--format', 'stylish'], { encoding: 'utf8', stdio: 'pipe' });

    // Assess
    try {
      expect(lint()).not.toMatch(/warning|error/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('asks for the session cookie on every route but the public ones, and marks who may call each', async () => {
    // Prepare
    const routes = await tableRoutes();

    // Act
    const document = await openApiDocument();

    // Assess
    expect(document.components?.securitySchemes?.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'sid' });
    expect(document.security).toEqual([{ session: [] }]);
    for (const route of routes) {
      const operation = operationOf(document, route)!;
      expect(operation['x-surge-access'], route.spec.id).toBe(route.api.access);
      // No security, or an empty requirement among them: callable without a session.
      const anonymous = operation.security ? operation.security.length === 0 || operation.security.some((s) => Object.keys(s as object).length === 0) : false;
      expect(anonymous, route.spec.id).toBe(route.api.access === 'public');
    }
  });
});
