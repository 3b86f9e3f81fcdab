import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { AppError, ForbiddenError, UnauthenticatedError, UnavailableError } from '../platform/errors';
import { countOutcome, errorHandler, normaliseEvent, throughCloudFront, validateInput, type ApiEvent, type InputSchemas, type Outcomes, type Parsed } from '../platform/http/middleware';
import type { ApiResult } from '../platform/http/response';
import { functionStack } from '../platform/function-stack';
import { parseSessionCookie, resolveSession, SESSION_COOKIE, type Principal } from '../sessions/store';
import type { Role } from '../sessions/users';

/*
 * The route stack sits above both the platform's generic middlewares and the sessions capability,
 * which authenticates: the platform knows no capability (.dependency-cruiser.cjs).
 */

export type AuthedEvent<In = unknown> = ApiEvent<In> & { principal: Principal };

type Access = 'public' | Role;

type EventOf<A extends Access, In> = A extends 'public' ? ApiEvent<In> : AuthedEvent<In>;

/**
 * The one middleware stack of every HTTP function: the function stack (metrics flushed once the
 * invocation ends, the stores' credentials), event normalisation, the CloudFront check (where CloudFront is in front),
 * authentication, input validation (path, query, headers, JSON body), the route's outcome counted
 * (where it has outcomes), then the error handler last. Handlers only see valid input, typed by
 * the schemas; the exported Lambda handler takes the plain API Gateway event.
 */
export function api<A extends Access, S extends InputSchemas = {}>(options: { access: A; outcomes?: Outcomes } & S) {
  const stack = functionStack<APIGatewayProxyEventV2, ApiResult>().use(normaliseEvent()).use(throughCloudFront());
  if (options.access !== 'public') stack.use(authenticate(options.access));
  stack.use(validateInput(options));
  if (options.outcomes) stack.use(countOutcome(options.outcomes));
  stack.use(errorHandler());
  return {
    handler: (fn: (event: EventOf<A, Parsed<S>>, context: Context) => Promise<ApiResult>) =>
      // The options stay on the handler, so a build step reads a route's access and schemas from its entry (the OpenAPI document).
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
    throw error instanceof AppError ? error : new UnavailableError('Sessions are unavailable, try again shortly');
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
