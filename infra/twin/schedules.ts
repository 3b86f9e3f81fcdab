/** The events of triggers that are neither HTTP, a queue nor SES, and the schedule rules that send them. */
import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import { functions, type FunctionSpec } from '../../functions/table';
import { TWIN_REGION } from './deployment';
import { logFunctionError } from './lambda/function-errors';
import type { FunctionRunner } from './lambda/runners';

/** The EventBridge event a schedule rule sends. */
function scheduledEvent(functionId: string): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString(),
    region: TWIN_REGION,
    resources: [`arn:aws:events:${TWIN_REGION}:000000000000:rule/surge-${functionId}`],
    detail: {},
  };
}

/** The event a trigger that is not HTTP, a queue or SES sends: a schedule rule's, or the deploy trigger's (which carries nothing the function reads). */
export function triggerEvent(spec: FunctionSpec): unknown {
  return spec.trigger.kind === 'schedule' ? scheduledEvent(spec.id) : {};
}

/** The table's schedule rules: each scheduled function invoked at its rate, until stopped. */
export function startSchedules(runners: Map<string, FunctionRunner>): { stop(): void } {
  const timers = functions.flatMap((spec) => {
    if (spec.trigger.kind !== 'schedule') return [];
    const lambda = runners.get(spec.id)!;
    const timer = setInterval(() => {
      lambda.invoke(triggerEvent(spec)).catch((error: Error) => logFunctionError(spec.id, error));
    }, spec.trigger.rateMinutes * 60_000);
    timer.unref();
    return [timer];
  });
  return { stop: () => timers.forEach((timer) => clearInterval(timer)) };
}
