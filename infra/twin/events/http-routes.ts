/** The gateway's routes: API Gateway route paths ({param} segments) compiled to patterns, and a request's match among them. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { HttpMethod, RouteThrottle } from '../../../functions/table';
import { routeThrottleBucket } from './route-throttle';

export interface HttpRoute {
  method: HttpMethod;
  /** API Gateway route path, e.g. /items/{itemId} */
  path: string;
  invoke(event: APIGatewayProxyEventV2): Promise<unknown>;
  /** The route's throttle in the stage, which the gateway applies as deployed (GatewayOptions.routeThrottles), a 429 past it. */
  throttle?: RouteThrottle;
}

export interface CompiledRoute extends HttpRoute {
  routeKey: string;
  pattern: RegExp;
  params: string[];
  /** Whether a request arriving now passes the route's throttle. */
  passesThrottle(): boolean;
}

/** A path variable's segment, {name}. */
const PATH_VARIABLE = /^\{([A-Za-z0-9_]+)\}$/;

function compileRoute(route: HttpRoute): CompiledRoute {
  const params: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const param = PATH_VARIABLE.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(param[1]!);
      return '([^/]+)';
    })
    .join('/');
  const bucket = route.throttle && routeThrottleBucket(route.throttle);
  return {
    ...route,
    routeKey: `${route.method} ${route.path}`,
    pattern: new RegExp(`^${source}$`),
    params,
    passesThrottle: bucket ? () => bucket.take() : () => true,
  };
}

/** A route's segments, each a literal or (null) a path variable. */
const segmentsOf = (route: HttpRoute) => route.path.split('/').map((segment) => (PATH_VARIABLE.test(segment) ? null : segment));

/** Whether some path matches both: as many segments, and no place where both are literal and differ. */
function overlap(a: (string | null)[], b: (string | null)[]): boolean {
  return a.length === b.length && a.every((segment, i) => segment === null || b[i] === null || segment === b[i]);
}

/** Of two routes that overlap, whether a is the more specific: literal wherever b is, and somewhere b is not. */
function moreSpecific(a: (string | null)[], b: (string | null)[]): boolean {
  return b.every((segment, i) => segment === null || a[i] !== null) && a.some((segment, i) => segment !== null && b[i] === null);
}

/**
 * Routes checked and ready to serve, in the order matchRoute tries them: each route key at most
 * once, and of two routes a path can match alike, the more specific first, since API Gateway takes
 * the most specific (GET /pets/dog before GET /pets/{id}). Two that overlap with neither the more
 * specific (GET /a/{x}/c and GET /a/b/{y}: which takes /a/b/c, API Gateway does not say) are
 * refused, as are two differing only in their variables' names. Otherwise the order is the table's.
 */
export function compileRoutes(routes: HttpRoute[]): CompiledRoute[] {
  const ordered: { route: CompiledRoute; segments: (string | null)[] }[] = [];
  for (const route of routes.map(compileRoute)) {
    const segments = segmentsOf(route);
    // Before the first it is more specific than; every route more specific than it is before that one already.
    let at = ordered.length;
    for (const [i, other] of ordered.entries()) {
      if (other.route.routeKey === route.routeKey) throw new Error(`Route ${route.routeKey} is described twice`);
      if (other.route.method !== route.method || !overlap(segments, other.segments)) continue;
      if (moreSpecific(segments, other.segments)) at = Math.min(at, i);
      else if (!moreSpecific(other.segments, segments))
        throw new Error(`Routes ${other.route.routeKey} and ${route.routeKey} match some path alike, and API Gateway does not say which it takes`);
    }
    ordered.splice(at, 0, { route, segments });
  }
  return ordered.map(({ route }) => route);
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The first route of the request's method whose pattern its path matches (compileRoutes's order: the most specific), with the path's parameters decoded. */
export function matchRoute(
  routes: CompiledRoute[],
  method: string | undefined,
  path: string,
): { route: CompiledRoute; pathParameters?: Record<string, string> } | undefined {
  for (const route of routes) {
    if (route.method !== method) continue;
    const match = route.pattern.exec(path);
    if (!match) continue;
    return route.params.length ? { route, pathParameters: Object.fromEntries(route.params.map((name, i) => [name, decode(match[i + 1]!)])) } : { route };
  }
  return undefined;
}
