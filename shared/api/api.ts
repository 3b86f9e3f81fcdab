import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { AppError, errorStatus, ForbiddenError, UnauthenticatedError, UnavailableError, type ErrorCode } from '../platform/errors';
import {
  countOutcome,
  errorHandler,
  normaliseEvent,
  throughCloudFront,
  validateInput,
  type ApiEvent,
  type InputSchemas,
  type Outcomes,
  type Parsed,
} from '../platform/http/middleware';
import type { Answer, ApiResult } from '../platform/http/response';
import type * as z from '../platform/zod';
import { functionStack, inSequence } from '../platform/function-stack';
import { VIEWER_ADDRESS_HEADER } from '../platform/http/client-address';
import { CORRELATION_HEADER } from '../platform/http/correlation';
import { VIEWER_HOST_HEADER } from '../platform/http/public-url';
import { parseSessionCookie, resolveSession, SESSION_COOKIE, type Principal } from '../sessions/store';
import type { Role } from '../sessions/account-rules';

/*
 * The route stack sits above both the platform's generic middlewares and the sessions capability,
 * which authenticates: the platform knows no capability (.dependency-cruiser.cjs).
 */

export type AuthedEvent<In = unknown> = ApiEvent<In> & { principal: Principal };

type Access = 'public' | Role;

type EventOf<A extends Access, In> = A extends 'public' ? ApiEvent<In> : AuthedEvent<In>;

/**
 * A route's own answers: each status with its body's schema, or null for none (204, 304). Its
 * successes, and a page's 404: an HTML route says "not here" with a page, not the JSON error.
 */
export type AnswerSchemas = { [Status in 200 | 201 | 202 | 204 | 304 | 404 | 503]?: z.ZodMiniType | null };

/** The media types a route's successful answers may have besides JSON: the docs page's HTML, the feeds'. */
export type AnswerMedia = 'text/html' | 'application/atom+xml' | 'application/feed+json';

/** The answers a handler may return: one of the declared statuses, with a body of its schema's type. */
type AnswerOf<R extends AnswerSchemas> = {
  [Status in keyof R & number]: Answer<Status, R[Status] extends z.ZodMiniType ? z.output<R[Status]> : undefined>;
}[keyof R & number];

/**
 * What a route declares beside its request schemas: who may call it, the outcomes it counts, its
 * successful answers and the codes of the errors its handler's domain call throws (those the stack
 * itself gives are stackErrors'). The OpenAPI document is built from these (infra/openapi).
 */
export interface RouteOptions<A extends Access = Access, R extends AnswerSchemas = AnswerSchemas> extends InputSchemas {
  access: A;
  outcomes?: Outcomes;
  answers: R;
  /** The media type of its successful answers, when not JSON (the docs page's HTML, a feed: its schema a string). */
  answerMedia?: AnswerMedia;
  /** Headers its successful answers carry (ETag, Cache-Control …), by name, each with what it says; every answer, unless it says required: false. */
  answerHeaders?: Readonly<Record<string, AnswerHeader>>;
  errors: readonly ErrorCode[];
  /**
   * A public route that reads the session cookie when one comes: sign-in and sign-up replace it,
   * health's detail is an admin's. Routes with a role read it anyway; the rest are never given
   * cookies (normaliseEvent), so that the edge may drop them.
   */
  readsSessionCookie?: true;
}

/** What an answer header says, or that and that some answers leave it out. */
export type AnswerHeader = string | { description: string; required: false };

/** What a route reads of a request besides its path and body, by name: what the edge must forward to it. */
export interface RequestReads {
  headers: string[];
  cookies: string[];
  queryStrings: string[];
}

const objectKeys = (schema: z.ZodMiniType | undefined): string[] => (schema ? Object.keys((schema as z.ZodMiniObject)._zod.def.shape) : []);

/**
 * Every header, cookie and query string a route reads: its schemas' names, the session cookie where
 * it authenticates, the body's content type, and what this stack reads of every request (its
 * correlation id, the viewer's address and host). The stack's edge forwards exactly these.
 */
export function requestReads(options: RouteOptions): RequestReads {
  return {
    headers: [CORRELATION_HEADER, VIEWER_ADDRESS_HEADER, VIEWER_HOST_HEADER, ...(options.body ? ['content-type'] : []), ...objectKeys(options.headers)],
    cookies: readsCookies(options) ? [SESSION_COOKIE] : [],
    queryStrings: objectKeys(options.query),
  };
}

const readsCookies = (options: RouteOptions) => options.access !== 'public' || options.readsSessionCookie === true;

/**
 * The errors the stack gives whatever the handler does: a request around CloudFront (403), a
 * dependency away (503, the error handler), input its schemas refuse, a body that is not JSON
 * within the limit, no session. A role's 403 is the admin routes' own FORBIDDEN, which the
 * CloudFront check gives every route anyway.
 */
export function stackErrors(options: RouteOptions): ErrorCode[] {
  const { access, params, query, headers, body } = options;
  return [
    'FORBIDDEN',
    'UNAVAILABLE',
    ...(params || query || headers || body ? (['VALIDATION_FAILED'] as const) : []),
    ...(body ? (['BAD_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'] as const) : []),
    ...(access === 'public' ? [] : (['UNAUTHENTICATED'] as const)),
  ];
}

/**
 * The one middleware stack of every HTTP function: the function stack (metrics flushed once the
 * invocation ends, the stores' credentials), then in sequence (one middleware to middy) event
 * normalisation, the CloudFront check (where CloudFront is in front), authentication, input
 * validation (path, query, headers, JSON body), then the route's outcome counted
 * (where it has outcomes), then the error handler last. Handlers only see valid input, typed by
 * the schemas, and return one of the answers declared, typed by theirs; the exported Lambda
 * handler takes the plain API Gateway event.
 */
export function api<A extends Access, R extends AnswerSchemas, S extends InputSchemas = {}>(options: RouteOptions<A, R> & S) {
  // A code its capability never registered (its codes.ts not imported) fails the cold start, not a request with a 500.
  for (const code of [...stackErrors(options), ...options.errors]) errorStatus(code);
  const stack = functionStack<APIGatewayProxyEventV2, ApiResult>().use(
    inSequence('routeRequest', [
      normaliseEvent({ cookies: readsCookies(options) }),
      throughCloudFront(),
      ...(options.access !== 'public' ? [authenticate(options.access)] : []),
      validateInput(options),
    ] as MiddlewareObj[]),
  );
  if (options.outcomes) stack.use(countOutcome(options.outcomes));
  stack.use(errorHandler());
  return {
    handler: (fn: (event: EventOf<A, Parsed<S>>, context: Context) => Promise<AnswerOf<R>>) =>
      // The options stay on the handler, so a build step reads a route's access, schemas and answers from its entry (the OpenAPI document).
      Object.assign(
        stack.handler((event, context) => fn(event as EventOf<A, Parsed<S>>, context)),
        { api: options },
      ),
  };
}

/**
 * The signed-in principal of a request, who must hold the role: 401 without a live session, 403
 * with the wrong role. What a route's access does before its handler; a public route that shows
 * more to some (health's detail) asks it itself.
 */
export async function principalOf(event: ApiEvent, role: Role): Promise<Principal> {
  const handle = parseSessionCookie(event.cookieMap[SESSION_COOKIE]);
  if (!handle) throw new UnauthenticatedError();
  let principal: Principal;
  try {
    principal = await resolveSession(handle);
  } catch (error) {
    throw error instanceof AppError ? error : new UnavailableError('Sessions are unavailable, try again shortly', error);
  }
  if (role === 'admin' && principal.role !== 'admin') throw new ForbiddenError('Admins only');
  return principal;
}

function authenticate(role: Role): MiddlewareObj<APIGatewayProxyEventV2> {
  return {
    name: 'authenticate',
    before: async (request) => {
      const event = request.event as AuthedEvent;
      event.principal = await principalOf(event, role);
    },
  };
}
