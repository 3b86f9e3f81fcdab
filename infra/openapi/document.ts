/**
 * The OpenAPI 3.1 document of Surge's HTTP API, built from the routes of functions/table.ts and
 * the options each entry's api() keeps on its handler (access, request schemas, answers, errors)
 * by zod-openapi (docs/design/openapi-generator.md). Written here is only what no library knows:
 * the table's rows as operations, the session as the security scheme, and the answers the stack
 * and API Gateway give around a handler's own.
 */
import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from 'zod-openapi';
import { inFlightCeiling } from '../../functions/table';
import { routesOfTable, type TableRoute } from '../table-routes';
import { stackErrors, type AnswerHeader, type RouteOptions } from '../../shared/api/api';
import { errorStatus, type ErrorCode } from '../../shared/platform/errors';
import * as z from '../../shared/platform/zod';
import { SESSION_COOKIE } from '../../shared/sessions/store';

type Route = TableRoute;

/**
 * The capabilities the docs page groups operations by (OpenAPI tags), each with the paths it holds,
 * most specific first: a route takes the first whose pattern matches its path. A route that none
 * matches fails the build (test/infra/openapi.test.ts holds every route to one).
 */
const CAPABILITIES: readonly { name: string; description: string; paths: RegExp }[] = [
  {
    name: 'Waiting room',
    description: "A sale's waiting room: join, wait, claim the pass an order needs; the page; the admin's settings",
    paths: /^\/(wait\/|items\/\{itemId\}\/(queue|waiting-room))/,
  },
  { name: 'Orders', description: 'Flash-sale orders: the stock, an order, its status', paths: /^\/(items|orders)\b/ },
  { name: 'Coupons', description: 'Time-deal coupons: a deal, a coupon, the coupons held', paths: /^\/(deals\b|me\/coupons$)/ },
  { name: 'Catalog', description: 'The cached catalog of programs', paths: /^\/programs\b/ },
  {
    name: 'Newsletters',
    description: 'Inbound newsletters: the inbox address, newsletters, issues, quarantine, feeds',
    paths: /^\/(me\/(inbox|newsletters|quarantine|feeds)|feeds\/)/,
  },
  { name: 'Sessions', description: 'Accounts and sessions: sign-up, sign-in, sign-out, the signed-in user', paths: /^\/(sessions|users|me)(\/|$)/ },
  {
    name: 'Operations',
    description: "An operator's: the audits of a sale, load-test buyers, health, this document and its page",
    paths: /^\/(admin\/|health$|openapi\.json$|docs$)/,
  },
];

/** The capability a route's operation is grouped under. */
export function capabilityOf(path: string): string {
  const capability = CAPABILITIES.find((c) => c.paths.test(path));
  if (!capability) throw new Error(`No capability of infra/openapi/document.ts groups ${path}: add it to one`);
  return capability.name;
}

/** API Gateway's own answers (no route, a throttle, a payload past its 10 MB) carry this body, not Surge's error. */
const GatewayMessage = z
  .strictObject({ message: z.string() })
  .check(z.meta({ id: 'GatewayMessage', description: "API Gateway's own answer, given before or instead of Surge's function: not Surge's error body" }));

/** Surge's error body, its code one of those the route can give with this status. */
const errorBody = (codes: readonly ErrorCode[]) =>
  z.strictObject({
    error: z.strictObject({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      /** VALIDATION_FAILED: each refused field's path and message; ALREADY_ISSUED: the coupon held. */
      details: z.optional(z.unknown()),
    }),
  });

/** One of possibly several answers a status stands for: the handler's, Surge's error, API Gateway's. */
interface StatusAnswer {
  description: string;
  /** undefined: no body (204). */
  schema?: z.ZodMiniType;
  /** Its media type: application/json unless the route's successes are another (answerMedia). */
  media?: string;
  /** Whether this answer carries Retry-After: Surge's 503s and RATE_LIMITED's 429 do, API Gateway's and health's 503 do not. */
  retryAfter: boolean;
  /** Further headers it carries (a route's answerHeaders), by name, with what each says. */
  headers?: Readonly<Record<string, AnswerHeader>>;
}

const RETRY_AFTER = { description: 'Whole seconds after which a retry may be answered', schema: { type: 'integer' as const, minimum: 1 } };

function errorAnswers(route: Route): Map<number, StatusAnswer[]> {
  const codes = [...new Set([...stackErrors(route.api), ...route.api.errors])];
  const byStatus = new Map<number, StatusAnswer[]>();
  for (const status of [...new Set(codes.map((code) => errorStatus(code)))]) {
    const ofStatus = codes.filter((code) => errorStatus(code) === status);
    byStatus.set(status, [
      { description: `Surge's error: ${ofStatus.join(', ')}`, schema: errorBody(ofStatus), retryAfter: status === 503 || ofStatus.includes('RATE_LIMITED') },
    ]);
  }
  return byStatus;
}

function gatewayAnswers(route: Route): Map<number, StatusAnswer[]> {
  const answers = new Map<number, StatusAnswer[]>([
    [
      429,
      [
        {
          description: `API Gateway's throttle of the stage or route${route.spec.concurrencyCap === undefined ? '' : " (from the twin's sources: the function's concurrency cap)"}`,
          schema: GatewayMessage,
          retryAfter: false,
        },
      ],
    ],
  ]);
  if (inFlightCeiling(route.spec) !== undefined) {
    const description =
      "API Gateway: Lambda throttled the function, all its invocations at once in flight (a crowd slower than the p99 its route's throttle is sized for); the function did not run: retry";
    answers.set(500, [{ description, schema: GatewayMessage, retryAfter: false }]);
  }
  const pathParameters = route.path.includes('{');
  if (pathParameters || route.spec.loadTest) {
    const why = [
      pathParameters && 'a path that matches no route (e.g. a parameter holding /)',
      route.spec.loadTest && 'the prod stage, which has no load-test routes',
    ]
      .filter(Boolean)
      .join('; ');
    answers.set(404, [{ description: `API Gateway: ${why}`, schema: GatewayMessage, retryAfter: false }]);
  }
  if (route.api.body) answers.set(413, [{ description: 'API Gateway: a payload past its 10 MB', schema: GatewayMessage, retryAfter: false }]);
  return answers;
}

function responses(route: Route): Record<string, ZodOpenApiResponseObject> {
  const all = new Map<number, StatusAnswer[]>();
  for (const [status, schema] of Object.entries(route.api.answers)) {
    all.set(Number(status), [
      {
        description: STATUS_CODES[status]!,
        ...(schema ? { schema } : {}),
        ...(route.api.answerMedia ? { media: route.api.answerMedia } : {}),
        retryAfter: false,
        ...(route.api.answerHeaders ? { headers: route.api.answerHeaders } : {}),
      },
    ]);
  }
  for (const answers of [errorAnswers(route), gatewayAnswers(route)]) {
    for (const [status, more] of answers) all.set(status, [...(all.get(status) ?? []), ...more]);
  }
  return Object.fromEntries(
    [...all.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, answers]) => {
        const media = [...new Set(answers.flatMap((answer) => (answer.schema ? [answer.media ?? 'application/json'] : [])))];
        const content = Object.fromEntries(
          media.map((type) => {
            const schemas = answers.flatMap((answer) => (answer.schema && (answer.media ?? 'application/json') === type ? [answer.schema] : []));
            return [type, { schema: schemas.length === 1 ? schemas[0]! : z.union(schemas) }];
          }),
        );
        const retryAfter = answers.filter((answer) => answer.retryAfter).length;
        // A success's own headers: every answer of its status is the route's (errors take other statuses).
        const own = Object.entries(answers[0]?.headers ?? {}).map(([name, header]) => [
          name,
          typeof header === 'string'
            ? { description: header, schema: { type: 'string' as const }, required: answers.length === 1 }
            : { description: header.description, schema: { type: 'string' as const }, required: false },
        ]);
        const headers = { ...Object.fromEntries(own), ...(retryAfter ? { 'Retry-After': { ...RETRY_AFTER, required: retryAfter === answers.length } } : {}) };
        const response: ZodOpenApiResponseObject = {
          description: answers.map((answer) => answer.description).join('. Or: '),
          ...(Object.keys(headers).length ? { headers } : {}),
          ...(media.length ? { content } : {}),
        };
        return [String(status), response];
      }),
  );
}

/** Whether a query schema refuses parameters it does not name (z.strictObject): OpenAPI's parameters cannot say so. */
const refusesUnknown = (schema: z.ZodMiniType) => (schema._zod.def as { catchall?: z.ZodMiniType }).catchall?._zod.def.type === 'never';

function operation(route: Route): ZodOpenApiOperationObject {
  const { spec, api } = route;
  const description = [
    api.access === 'admin' && 'Admins only.',
    api.access === 'user' && 'Signed-in users only.',
    // A public route that can answer UNAUTHENTICATED shows more to a session that asks (health's detail).
    api.access === 'public' && (api.errors.includes('UNAUTHENTICATED') ? 'Public; some of it needs a session.' : 'Public: no session needed.'),
    api.query && refusesUnknown(api.query) && 'Query parameters it does not name are refused (400 VALIDATION_FAILED).',
    spec.loadTest && 'Deployed where load tests may run (the twin, the dev stage); not in prod.',
  ].filter(Boolean);
  return {
    operationId: spec.id,
    tags: [capabilityOf(route.path)],
    summary: spec.description,
    description: description.join(' '),
    'x-surge-access': api.access,
    ...(api.access === 'public' ? { security: api.errors.includes('UNAUTHENTICATED') ? [{}, { session: [] }] : [] } : {}),
    // zod-openapi 5.4.6 throws on a location given as undefined (it reads `_zod` of it): only the ones the route has.
    requestParams: {
      ...(api.params ? { path: api.params } : {}),
      ...(api.query ? { query: api.query } : {}),
      ...(api.headers ? { header: api.headers } : {}),
    },
    ...(api.body ? { requestBody: { required: true, content: { 'application/json': { schema: api.body } } } } : {}),
    responses: responses(route),
  };
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The document of every route of the table, the load-test route included: marked, and answering 404 in prod. */
export async function openApiDocument() {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of await routesOfTable()) {
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route) };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Surge',
      version,
      description:
        'Surge\'s HTTP API. Every error of Surge\'s answers `{"error":{"code","message","details"?}}`, its code one of those listed under its status; API Gateway\'s own answers (404, 413, 429, and a throttled function\'s 500) carry `{"message"}` instead.',
      license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
    },
    servers: [{ url: '/' }],
    tags: CAPABILITIES.map(({ name, description }) => ({ name, description })),
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'The session cookie POST /sessions and POST /users set' },
      },
    },
    security: [{ session: [] }],
    paths,
  });
}
