/** The twin's routes of the table (infra/twin/routes.ts): each with its route's throttle in the stage, which the gateway applies as deployed. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ROUTE_THROTTLE, functions } from '../../functions/table';
import { EmfCollector } from '../../infra/twin/lambda/emf';
import { twinHttpRoutes } from '../../infra/twin/routes';

describe("the twin's HTTP routes", () => {
  it('carry each route’s throttle as the stage sets it: its own of the table, else the stage’s default', () => {
    // Prepare
    const table = Object.fromEntries(
      functions.flatMap((spec) =>
        spec.trigger.kind === 'http' ? [[`${spec.trigger.method} ${spec.trigger.path}`, spec.trigger.throttle ?? DEFAULT_ROUTE_THROTTLE]] : [],
      ),
    );

    // Act
    const routes = twinHttpRoutes(new Map(), new EmfCollector()).flatMap((route) =>
      route.throttle ? [[`${route.method} ${route.path}`, route.throttle]] : [],
    );

    // Assess
    expect(Object.fromEntries(routes)).toEqual(table);
    expect(Object.fromEntries(routes)['POST /items/{itemId}/orders']).toEqual({ rateLimit: 4_000, burstLimit: 128, p99BudgetMs: 64 });
    expect(Object.fromEntries(routes)['GET /me']).toEqual({ rateLimit: 5_000, burstLimit: 10_000 });
  });
});
