/**
 * What each CloudFront behaviour forwards to the API, derived from what the routes it serves read
 * (shared/api/api.ts, requestReads): a header added to a route's schema is forwarded by the
 * behaviour that serves the route, and a route that reads what its behaviour may never forward
 * fails the synth, naming route, what it reads and behaviour. The twin's edge reads the result
 * back from the synthesized template (infra/twin/edge/), so what is not forwarded here does not
 * reach a function there either.
 */
import picomatch from 'picomatch';
import type { HttpMethod } from '../../functions/table';
import type { RequestReads } from '../../shared/api/api';

/** CloudFront's quotas per origin request policy: headers, cookies and query strings in an allow list, 10 each. */
export const ORIGIN_REQUEST_POLICY_MAX_NAMES = 10;

/** A route as the edge sees it: where, how, and what it reads. */
export interface EdgeRoute {
  id: string;
  method: HttpMethod;
  path: string;
  reads: RequestReads;
}

/** One behaviour of the distribution, as the stack decides it: the rest is derived from its routes. */
export interface BehaviourPlan {
  /** Its name in messages (the policy's construct id). */
  name: string;
  /** CloudFront's path pattern; none for the default behaviour. */
  pathPattern?: string;
  methods: readonly string[];
  /** Why it may never forward cookies, where it may not; a route reading one then fails the synth. */
  noCookies?: string;
  /** Why it may never forward query strings, where it may not. */
  noQueryStrings?: string;
}

/** What one behaviour's origin request policy forwards: sorted names, each list empty for none. */
export interface BehaviourRequests {
  plan: BehaviourPlan;
  routes: EdgeRoute[];
  headers: string[];
  cookies: string[];
  queryStrings: string[];
}

/**
 * CloudFront's path patterns: `*` matches any run of characters, `/` included, `?` exactly one,
 * every other character itself, case-sensitively. picomatch in bash mode (a single star crosses
 * slashes) with its other globbing off is exactly that.
 */
export function pathPatternMatcher(pattern: string): (path: string) => boolean {
  return picomatch(pattern, { bash: true, dot: true, nobrace: true, nobracket: true, noextglob: true, nonegate: true });
}

/** A path a route template serves: each `{parameter}` stands for a segment; a pattern that matches it serves the route. */
const samplePath = (template: string) => template.replace(/\{[^}]+\}/g, 'x');

/** The behaviour that serves a path: the first additional one whose pattern matches, in the order given, else the default (last). */
export function behaviourFor<B extends { plan: BehaviourPlan }>(behaviours: readonly B[], path: string): B {
  return behaviours.find(({ plan }) => plan.pathPattern === undefined || pathPatternMatcher(plan.pathPattern)(path))!;
}

/**
 * Each behaviour's forwarding, in precedence order (additional behaviours first, then the default),
 * from the routes it serves; throws when a route reads what its behaviour may never forward, when a
 * behaviour does not allow a route's method, or when a policy would pass CloudFront's quota.
 */
export function originRequestsOf(routes: readonly EdgeRoute[], plans: readonly BehaviourPlan[]): BehaviourRequests[] {
  if (plans.filter((plan) => plan.pathPattern === undefined).length !== 1 || plans.at(-1)!.pathPattern !== undefined) {
    throw new Error('The edge needs exactly one default behaviour, last');
  }
  const behaviours: BehaviourRequests[] = plans.map((plan) => ({ plan, routes: [], headers: [], cookies: [], queryStrings: [] }));
  for (const route of routes) {
    const behaviour = behaviourFor(behaviours, samplePath(route.path));
    const { plan } = behaviour;
    const at = `route ${route.method} ${route.path} (${route.id}) is served by the behaviour ${plan.name}`;
    if (!plan.methods.includes(route.method)) throw new Error(`The ${at}, which does not allow ${route.method}: it could never be called`);
    const cookie = route.reads.cookies[0];
    if (cookie !== undefined && plan.noCookies) throw new Error(`The ${at}, which forwards no cookie (${plan.noCookies}), but it reads the cookie ${cookie}`);
    const query = route.reads.queryStrings[0];
    if (query !== undefined && plan.noQueryStrings)
      throw new Error(`The ${at}, which forwards no query string (${plan.noQueryStrings}), but it reads ?${query}`);
    behaviour.routes.push(route);
    behaviour.headers.push(...route.reads.headers);
    behaviour.cookies.push(...route.reads.cookies);
    behaviour.queryStrings.push(...route.reads.queryStrings);
  }
  return behaviours.map((behaviour) => {
    const named = (kind: string, names: string[]) => {
      const unique = [...new Set(kind === 'headers' ? names.map((name) => name.toLowerCase()) : names)].sort();
      if (unique.length > ORIGIN_REQUEST_POLICY_MAX_NAMES) {
        throw new Error(
          `The behaviour ${behaviour.plan.name} would forward ${unique.length} ${kind} (${unique.join(', ')}): CloudFront allows ${ORIGIN_REQUEST_POLICY_MAX_NAMES} per origin request policy`,
        );
      }
      return unique;
    };
    return {
      ...behaviour,
      headers: named('headers', behaviour.headers),
      cookies: named('cookies', behaviour.cookies),
      queryStrings: named('query strings', behaviour.queryStrings),
    };
  });
}
