/** The twin's routes of the table (infra/twin/routes.ts): the stage's route throttles where the twin runs what ships. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ROUTE_THROTTLE, functions } from '../../functions/table';
import { EmfCollector } from '../../infra/twin/lambda/emf';
import { twinHttpRoutes } from '../../infra/twin/routes';

const throttlesOf = (routeThrottles: boolean) =>
  Object.fromEntries(
    twinHttpRoutes(new Map(), new EmfCollector(), { routeThrottles }).flatMap((route) =>
      route.throttle ? [[`${route.method} ${route.path}`, route.throttle]] : [],
    ),
  );

describe("the twin's HTTP routes", () => {
  it('throttle every route as the stage does with the bundles (its own throttle of the table, or the stage’s default), and none from the sources, whose benches drive a route past its throttle', () => {
    // Prepare
    const table = Object.fromEntries(
      functions.flatMap((spec) =>
        spec.trigger.kind === 'http' ? [[`${spec.trigger.method} ${spec.trigger.path}`, spec.trigger.throttle ?? DEFAULT_ROUTE_THROTTLE]] : [],
      ),
    );

    // Act
    const asShipped = throttlesOf(true);
    const fromSources = throttlesOf(false);

    // Assess
    expect(asShipped).toEqual(table);
    expect(asShipped['POST /items/{itemId}/orders']).toEqual({ rateLimit: 4_000, burstLimit: 128 });
    expect(asShipped['GET /me']).toEqual({ rateLimit: 5_000, burstLimit: 10_000 });
    expect(fromSources).toEqual({});
  });
});
