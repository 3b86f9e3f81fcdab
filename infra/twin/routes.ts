/**
 * What the twin's gateway and SMTP listener route to: the table's HTTP and SES functions, and the
 * twin's own endpoints (the benches' ceiling, the metrics, firing a schedule or the deploy trigger).
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DEFAULT_ROUTE_THROTTLE, functions, type FunctionSpec } from '../../functions/table';
import { capped } from './lambda/concurrency';
import { TWIN_INBOUND_DOMAIN } from './deployment';
import type { EmfCollector } from './lambda/emf';
import type { HttpRoute } from './events/http-routes';
import { INVOCATIONS_PATH, invocationCounts, type InvocationCounts, type TwinInvocations } from './lambda/invocations';
import { LocalLambda } from './lambda/lambda';
import type { FunctionRunner } from './lambda/runners';
import { triggerEvent } from './schedules';
import { functionArnOf } from './events/ses-event';
import type { MailRoute } from './events/smtp';

/**
 * A trivial function served through the same gateway and invoked the same way as the table's:
 * the ceiling benchmarks compare against. It is the twin's own, not a Lambda, so not in the table.
 */
export const CEILING_PATH = '/__twin/ceiling';
const ceilingSpec: FunctionSpec = {
  id: 'twin-ceiling',
  description: 'Answers 200 with a constant body',
  trigger: { kind: 'http', method: 'GET', path: CEILING_PATH },
  memoryMb: 128,
  timeoutSeconds: 3,
  env: [],
};

/**
 * GET /__twin/metrics: the EMF metrics the functions printed since the twin started, summed per
 * metric and dimension values as CloudWatch would (see EmfCollector), with the latest lines.
 */
export const METRICS_PATH = '/__twin/metrics';

/** POST /__twin/functions/{functionId}/invoke fires a schedule or the deploy trigger on demand, as EventBridge or CloudFormation would. */
export const FIRE_PATH = '/__twin/functions/{functionId}/invoke';

/**
 * The table's HTTP functions, each held to its concurrency cap (refused beyond it, as Lambda
 * throttles a synchronous invocation) and with its route's throttle in the stage (its own of the
 * table, else the stage's default), which the gateway applies as deployed; then the twin's own
 * endpoints. consumerInvocations reads the consumers' process's counts, when they run in one
 * (GET /__twin/invocations: invocations.ts).
 */
export function twinHttpRoutes(runners: Map<string, FunctionRunner>, emf: EmfCollector, consumerInvocations?: () => Promise<InvocationCounts>): HttpRoute[] {
  const httpRoutes: HttpRoute[] = functions.flatMap((spec: FunctionSpec) => {
    if (spec.trigger.kind !== 'http') return [];
    const lambda = runners.get(spec.id)!;
    const { method, path, throttle } = spec.trigger;
    const invoke = capped(spec, (event: APIGatewayProxyEventV2) => lambda.invoke(event), 'refuse');
    return [{ method, path, invoke, throttle: throttle ?? DEFAULT_ROUTE_THROTTLE }];
  });
  const ceiling = new LocalLambda(ceilingSpec, async () => async () => ({ statusCode: 200, body: '{"ok":true}' }));
  httpRoutes.push({ method: 'GET', path: CEILING_PATH, invoke: (event) => ceiling.invoke(event) });
  httpRoutes.push({
    method: 'GET',
    path: METRICS_PATH,
    invoke: async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(emf.snapshot()) }),
  });
  httpRoutes.push({
    method: 'GET',
    path: INVOCATIONS_PATH,
    invoke: async () => {
      const gateway = invocationCounts();
      let counts: TwinInvocations;
      try {
        counts = consumerInvocations ? { gateway, consumers: await consumerInvocations() } : { gateway };
      } catch (error) {
        // Their process is being started again: asked again, it answers once it is up.
        return { statusCode: 503, body: JSON.stringify({ error: { code: 'UNAVAILABLE', message: `The consumers' counts: ${(error as Error).message}` } }) };
      }
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(counts) };
    },
  });
  httpRoutes.push({
    method: 'POST',
    path: FIRE_PATH,
    invoke: async (event) => {
      const spec = functions.find((f) => f.id === event.pathParameters?.functionId && (f.trigger.kind === 'schedule' || f.trigger.kind === 'deploy'));
      if (!spec) return { statusCode: 404, body: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'No schedule or deploy trigger of that function' } }) };
      const result = await runners.get(spec.id)!.invoke(triggerEvent(spec));
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result }) };
    },
  });
  return httpRoutes;
}

/**
 * The table's SES functions, for mail to the twin's inbound domain; beyond its cap SES's
 * asynchronous invocation waits rather than being refused. An event whose retries are spent is
 * kept in the function's failures queue (`failureQueueUrls`, by function id), as Lambda's record.
 */
export function twinMailRoutes(runners: Map<string, FunctionRunner>, sqs: SQSClient, failureQueueUrls: Map<string, string>): MailRoute[] {
  return functions.flatMap((spec) => {
    if (spec.trigger.kind !== 'ses') return [];
    const lambda = runners.get(spec.id)!;
    return [
      {
        domain: TWIN_INBOUND_DOMAIN,
        functionArn: functionArnOf(`surge-${spec.id}`),
        invoke: capped(spec, (event) => lambda.invoke(event), 'wait'),
        keepFailure: async (record) => {
          await sqs.send(new SendMessageCommand({ QueueUrl: failureQueueUrls.get(spec.id)!, MessageBody: JSON.stringify(record) }));
        },
      },
    ];
  });
}
