/**
 * The table's route handlers as the tests call them directly: each answer held to the API's
 * contract as the twin's gateway holds it (infra/openapi/contract-under-test.ts), so a test that
 * skips the gateway cannot skip the contract. An answer that breaks it fails the calling test at
 * once, and the run at its end.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { functions } from '../../functions/table';
import { contractUnderTest } from '../../infra/openapi/contract-under-test';
import { answerText, gatewayAnswer } from '../../infra/twin/events/gateway-payload';
import type { ApiResult } from '../../shared/platform/http/response';

export type RouteHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<ApiResult>;

const check = contractUnderTest();

/** The handler of the table's route `id`, its answers held to the contract. */
export async function route(id: string): Promise<RouteHandler> {
  const spec = functions.find((candidate) => candidate.id === id);
  if (spec?.trigger.kind !== 'http') throw new Error(`${id} is not a route of the table`);
  const { method, path } = spec.trigger;
  const { handler } = (await import(`../../functions/${id}.ts`)) as { handler: RouteHandler };
  if (!check) throw new Error("No contract under test: the suite's global setup names it (SURGE_CONTRACT_DIR)");
  return async (event, context) => {
    const result = await handler(event, context);
    const problems = check(method, path, answerText(gatewayAnswer(result)));
    if (problems?.length) throw new Error(`Answer outside the contract: ${problems.join('; ')}`);
    return result;
  };
}
