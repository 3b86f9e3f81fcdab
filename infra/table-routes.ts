/**
 * The routes of functions/table.ts with what each entry's api() keeps on its handler (access,
 * request schemas, answers, errors): what the OpenAPI document and the stack's edge are built from.
 */
import { functions, type FunctionSpec, type HttpMethod } from '../functions/table';
import type { RouteOptions } from '../shared/api/api';

export interface TableRoute {
  spec: FunctionSpec;
  method: HttpMethod;
  path: string;
  api: RouteOptions;
}

let loading: Promise<TableRoute[]> | undefined;

/** Every route of the table with what its entry's api() keeps, its entries imported once per process. */
export function routesOfTable(): Promise<TableRoute[]> {
  loading ??= Promise.all(
    functions.flatMap((spec) => {
      const { trigger } = spec;
      if (trigger.kind !== 'http') return [];
      return [
        import(`../functions/${spec.id}.ts`).then((entry: { handler: { api: RouteOptions } }) => ({
          spec,
          method: trigger.method,
          path: trigger.path,
          api: entry.handler.api,
        })),
      ];
    }),
  );
  return loading;
}
