import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import { serviceEnvironment } from './config';

/** Where every business metric of Surge goes in CloudWatch; the stack's dashboard and alarms read it. */
export const METRICS_NAMESPACE = 'Surge';

let instance: Metrics | undefined;

/**
 * The instance's one Metrics, made on first use (importing this module reads no environment):
 * CloudWatch's Embedded Metric Format, one JSON line on stdout per flush, which Lambda's log
 * capture turns into metrics with no API call. Its one dimension is the service
 * (POWERTOOLS_SERVICE_NAME), so the dashboard's queries need no function names.
 * POWERTOOLS_METRICS_DISABLED=true turns it off.
 */
function metrics(): Metrics {
  instance ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? serviceEnvironment.POWERTOOLS_SERVICE_NAME });
  return instance;
}

/** Counts one business event (or `by` of them), e.g. `orders.accepted`; flushed with the invocation. */
export function count(name: string, by = 1): void {
  metrics().addMetric(name, MetricUnit.Count, by);
}

/** Records a duration in milliseconds, e.g. `orders.writerLag`; each value is kept, so CloudWatch can give percentiles. */
export function timing(name: string, milliseconds: number): void {
  metrics().addMetric(name, MetricUnit.Milliseconds, milliseconds);
}

/**
 * Flushes what an invocation recorded, once, when it ends (returned or failed), as Powertools'
 * logMetrics does; unlike it, an invocation that recorded nothing prints nothing, where logMetrics
 * warns "No application metrics to publish" on every one of them (most reads record nothing).
 * Where invocations overlap in one instance (the twin's shared instances), one flush may carry
 * another's values: sums stay right.
 */
export function flushMetrics(): MiddlewareObj {
  const flush = () => {
    if (instance?.hasStoredMetrics()) instance.publishStoredMetrics();
  };
  return { name: 'flushMetrics', after: flush, onError: flush };
}
