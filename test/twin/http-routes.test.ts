import { describe, expect, it } from 'vitest';
import { compileRoutes, matchRoute, type HttpRoute } from '../../infra/twin/events/http-routes';

const routesAt = (...paths: string[]): HttpRoute[] => paths.map((path) => ({ method: 'GET', path, invoke: async () => null }));

describe("the gateway's routes", () => {
  it('takes the most specific route a path matches, as API Gateway does, whatever order the table lists them in', () => {
    // Prepare: the less specific first, as a table may list them.
    const routes = compileRoutes(routesAt('/pets/{petId}/{part}', '/pets/{petId}', '/pets/dog/{part}', '/pets/dog', '/pets/dog/toys'));

    // Act
    const taken = ['/pets/dog', '/pets/cat', '/pets/dog/toys', '/pets/dog/bed', '/pets/cat/toys'].map((path) => matchRoute(routes, 'GET', path));

    // Assess
    expect(taken.map((match) => match?.route.path)).toEqual(['/pets/dog', '/pets/{petId}', '/pets/dog/toys', '/pets/dog/{part}', '/pets/{petId}/{part}']);
    expect(taken[4]!.pathParameters).toEqual({ petId: 'cat', part: 'toys' });
  });

  it('keeps the order of routes no path matches alike', () => {
    const paths = ['/me', '/items/{itemId}/orders', '/me/feeds', '/items/{itemId}'];

    expect(compileRoutes(routesAt(...paths)).map((route) => route.path)).toEqual(paths);
  });

  it('refuses two routes a path matches alike when neither is the more specific: which API Gateway takes, it does not say', () => {
    expect(() => compileRoutes(routesAt('/a/{x}/c', '/a/b/{y}'))).toThrow(/GET \/a\/\{x\}\/c and GET \/a\/b\/\{y\} match some path alike/);
    expect(() => compileRoutes(routesAt('/pets/{petId}', '/pets/{name}'))).toThrow(/match some path alike/);
    expect(() => compileRoutes([...routesAt('/x'), ...routesAt('/x')])).toThrow(/described twice/);
  });
});
