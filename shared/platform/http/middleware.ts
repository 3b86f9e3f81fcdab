/**
 * The generic middlewares of the HTTP functions, which know no capability: shared/api/api.ts
 * stacks them, with the session check between, into the one stack every route uses.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type * as z from '../zod';
import { timingSafeEqual } from 'node:crypto';
import { loadedSecret } from '../clients/credentials';
import { ORIGIN_VERIFY_HEADER } from '../config';
import { AppError, ForbiddenError, isDependencyUnavailable, isRefusedCredentials, RateLimitedError, UnavailableError } from '../errors';
import { loggableError, logger } from '../logger';
import { count } from '../metrics';
import { markThroughCloudFront } from './client-address';
import { json, type ApiResult } from './response';

/** Request bodies past this are refused before parsing; no endpoint takes more. */
const MAX_BODY_BYTES = 64 * 1024;

/** Schemas for the parts of a request a function reads; each is validated before the handler runs. */
export interface InputSchemas {
  params?: ObjectSchema;
  query?: ObjectSchema;
  headers?: ObjectSchema;
  body?: z.ZodMiniType;
}

/** Path parameters, query and headers arrive as objects of strings: their schemas take objects (what an OpenAPI parameter list is read from). */
type ObjectSchema = z.ZodMiniType<unknown, Record<string, unknown>>;

export type Parsed<S extends InputSchemas> = { [K in keyof S]: S[K] extends z.ZodMiniType ? z.infer<S[K]> : never };

export interface ApiEvent<In = unknown> extends APIGatewayProxyEventV2 {
  /** Cookies by name; the first occurrence of a name wins. */
  cookieMap: Readonly<Record<string, string>>;
  /** Path parameters, query, headers and body, validated against the function's schemas. */
  input: In;
}

/**
 * A route whose every answer is a business event: counted as `<prefix>.<ok>` when it succeeds, else
 * as `<prefix>.<error code in camelCase>` (`orders.soldOut`, `orders.limitExceeded`, `orders.rateLimited`).
 */
export interface Outcomes {
  prefix: string;
  ok: string;
}

/** Whether a name has an upper-case letter; a loop rather than a regular expression per name, on every request's path. */
function namesUpperCase(headers: Record<string, unknown>): boolean {
  for (const name in headers) if (name !== name.toLowerCase()) return true;
  return false;
}
const NO_COOKIES: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Header names lower-cased, and the cookies by name: only where the route reads cookies, so a
 * route that reads one without declaring it sees none here as it would behind the edge, which
 * forwards only what the routes declare (infra/stack/edge.ts).
 */
export function normaliseEvent(options: { cookies: boolean }): MiddlewareObj<APIGatewayProxyEventV2> {
  return {
    name: 'normaliseEvent',
    before: ({ event }) => {
      // API Gateway sends header names lower-cased already; only a hand-made event needs the copy.
      if (!event.headers || namesUpperCase(event.headers)) {
        const headers: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
        event.headers = headers;
      }
      (event as ApiEvent).cookieMap = options.cookies && event.cookies?.length ? cookiesByName(event.cookies) : NO_COOKIES;
    },
  };
}

function cookiesByName(cookies: string[]): Record<string, string> {
  const byName: Record<string, string> = {};
  for (const cookie of cookies) {
    const eq = cookie.indexOf('=');
    if (eq <= 0) continue;
    const name = cookie.slice(0, eq).trim();
    if (!(name in byName)) byName[name] = cookie.slice(eq + 1).trim();
  }
  return byName;
}

function sameSecret(presented: string | undefined, secret: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(secret);
  // Compared in constant time, so the answer's timing tells nothing of the secret.
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Where CloudFront fronts the API (ORIGIN_SECRET_ID set), a request without its origin header
 * went around the distribution and its WAF, straight to API Gateway's own endpoint: refused.
 * The variable is read at the stack's first invocation, as storeCredentials reads the secret ids.
 */
export function throughCloudFront(): MiddlewareObj<APIGatewayProxyEventV2> {
  let secretId: string | undefined | null = null;
  return {
    name: 'throughCloudFront',
    before: ({ event }) => {
      if (secretId === null) secretId = process.env.ORIGIN_SECRET_ID || undefined;
      if (!secretId) return;
      if (!sameSecret(event.headers[ORIGIN_VERIFY_HEADER], loadedSecret(secretId)))
        throw new ForbiddenError('Requests to this API go through its CloudFront distribution');
      markThroughCloudFront(event);
    },
  };
}

function check(schema: z.ZodMiniType, value: unknown, what: string): unknown {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = result.error.issues.map((i) => ({ path: [what, ...i.path].join('.'), message: i.message }));
  throw new AppError('VALIDATION_FAILED', `The request's ${what} is not valid`, details);
}

function parseJsonBody(event: APIGatewayProxyEventV2): unknown {
  const contentType = event.headers['content-type'] ?? '';
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(contentType)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send a JSON body with content-type application/json');
  }
  const raw = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `Bodies are limited to ${MAX_BODY_BYTES} bytes`);
  try {
    return JSON.parse(raw);
  } catch {
    throw new AppError('BAD_JSON', 'The body is not valid JSON');
  }
}

export function validateInput(schemas: InputSchemas): MiddlewareObj<APIGatewayProxyEventV2> {
  return {
    name: 'validateInput',
    before: ({ event }) => {
      const input: Record<string, unknown> = {};
      if (schemas.params) input.params = check(schemas.params, event.pathParameters ?? {}, 'path');
      if (schemas.query) input.query = check(schemas.query, event.queryStringParameters ?? {}, 'query');
      if (schemas.headers) input.headers = check(schemas.headers, event.headers, 'headers');
      if (schemas.body) input.body = check(schemas.body, parseJsonBody(event), 'body');
      (event as ApiEvent).input = input;
    },
  };
}

const camelCase = (code: string) => code.toLowerCase().replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** Runs its onError after the error handler's (middy runs them in reverse), so the answer is decided. */
export function countOutcome({ prefix, ok }: Outcomes): MiddlewareObj<APIGatewayProxyEventV2, ApiResult> {
  const succeeded = `${prefix}.${ok}`;
  // Each code's name made once: a sale's flood of refusals counts the same few.
  const refused = new Map<string, string>();
  return {
    name: 'countOutcome',
    after: () => count(succeeded),
    onError: ({ error, response }) => {
      const code = error instanceof AppError ? error.code : response?.statusCode === 503 ? 'UNAVAILABLE' : 'INTERNAL';
      let name = refused.get(code);
      if (name === undefined) refused.set(code, (name = `${prefix}.${camelCase(code)}`));
      count(name);
    },
  };
}

/** Every 503 tells the client when to come back: a dependency away, not a rejection. */
const RETRY_SOON = { headers: { 'retry-after': '1' } };

export function errorHandler(): MiddlewareObj<APIGatewayProxyEventV2, ApiResult, Error, Context> {
  return {
    name: 'errorHandler',
    onError: (request) => {
      const { error } = request;
      if (error instanceof AppError) {
        // `reason`: the logger keeps `message` for its own and drops a key of that name.
        if (error.status >= 500)
          logger.warn('Dependency unavailable', {
            code: error.code,
            reason: error.message,
            ...(error.cause === undefined ? {} : { cause: loggableError(error.cause) }),
          });
        const body = { error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } };
        const retryAfter =
          error instanceof RateLimitedError ? { headers: { 'retry-after': String(error.retryAfterSeconds) } } : error.status === 503 ? RETRY_SOON : {};
        request.response = json(error.status, body, retryAfter);
        return;
      }
      const logged = loggableError(error);
      const refused = isRefusedCredentials(error);
      if (refused || isDependencyUnavailable(error)) {
        logger.warn(refused ? 'Store refused the credentials; retry after the secret is looked up again' : 'Dependency unavailable', { error: logged });
        request.response = json(503, { error: { code: 'UNAVAILABLE', message: new UnavailableError().message } }, RETRY_SOON);
        return;
      }
      logger.error('Unhandled error', { awsRequestId: request.context.awsRequestId, error: logged });
      request.response = json(500, { error: { code: 'INTERNAL', message: 'Internal error' } });
    },
  };
}
