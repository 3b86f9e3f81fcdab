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

function compileRoute(route: HttpRoute): CompiledRoute {
  const params: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const param = /^\{([A-Za-z0-9_]+)\}$/.exec(segment);
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

/** Routes checked and ready to serve: each route key at most once. */
export function compileRoutes(routes: HttpRoute[]): CompiledRoute[] {
  const compiled = routes.map(compileRoute);
  const seen = new Set<string>();
  for (const route of compiled) {
    if (seen.has(route.routeKey)) throw new Error(`Route ${route.routeKey} is described twice`);
    seen.add(route.routeKey);
  }
  return compiled;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The first route of the request's method whose pattern its path matches, with the path's parameters decoded. */
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
