/**
 * The twin's event source mappings: a poller per queue trigger in the table, invoking its function,
 * in a process of their own (consumers.ts), in this process, or not at all (TwinOptions.consumers).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { join } from 'node:path';
import { functions, type QueueName } from '../../functions/table';
import { TWIN_REGION } from './deployment';
import { eachLine, type EmfCollector } from './lambda/emf';
import { logFunctionError } from './lambda/function-errors';
import { INVOCATIONS_PATH, type InvocationCounts } from './lambda/invocations';
import type { TwinOptions } from './options';
import { startPoller, type Poller } from './events/poller';
import { readyLine, spawnService, supervise } from './services/processes';
import type { ProvisionedQueue } from './provision';
import { runnerFor, type FunctionRunner, type FunctionRuntime } from './lambda/runners';

/** Carries the provisioned queues, the functions' runtime and the delivery fault switch to the consumers' process. */
export const QUEUES_ENV = 'SURGE_QUEUES';
export const RUNTIME_ENV = 'SURGE_FUNCTION_RUNTIME';
export const DELIVER_TWICE_ENV = 'SURGE_DELIVER_TWICE';

/** The twin's event source mappings: a poller per queue trigger in the table, invoking its function. */
export function startConsumers(
  provisioned: Record<QueueName, ProvisionedQueue>,
  sqs: SQSClient,
  runtime: FunctionRuntime,
  deliverTwice = false,
): { stop(): Promise<void> } {
  const runners: FunctionRunner[] = [];
  const pollers: Poller[] = functions.flatMap((spec) => {
    if (spec.trigger.kind !== 'queue') return [];
    const queue = provisioned[spec.trigger.queue];
    const lambda = runnerFor(spec, runtime);
    runners.push(lambda);
    return [
      startPoller({
        sqs,
        queueUrl: queue.url,
        queueArn: queue.arn,
        region: TWIN_REGION,
        batchSize: spec.trigger.batchSize,
        maxBatchingWindowSeconds: spec.trigger.maxBatchingWindowSeconds,
        // Lambda's event source mapping scales down to a capped function's concurrency: the rest wait in the queue.
        maxConcurrency: Math.min(spec.trigger.maxConcurrency, spec.concurrencyCap ?? Infinity),
        invoke: (event: SQSEvent) => lambda.invoke(event),
        onError: (error) => logFunctionError(spec.id, error),
        deliverTwice,
      }),
    ];
  });
  return {
    stop: async () => {
      await Promise.all(pollers.map((p) => p.stop()));
      await Promise.all(runners.map((r) => r.stop()));
    },
  };
}

/** The running consumers: pid is their process's, absent when they run in this one. */
export interface QueueConsumers {
  readonly pid?: number;
  /** Their process's invocation counts (invocations.ts); absent when they run in this one, and count into its own. */
  invocations?(): Promise<InvocationCounts>;
  stop(): Promise<void>;
}

/**
 * The consumers where options.consumers says (a process of their own by default), undefined when
 * off. The process's EMF lines go to emf as this process's do.
 */
export async function startQueueConsumers(
  options: Pick<TwinOptions, 'consumers' | 'deliverTwice' | 'stateDir' | 'onRestart'>,
  provisioned: Record<QueueName, ProvisionedQueue>,
  sqs: SQSClient,
  runtime: FunctionRuntime,
  emf: EmfCollector,
): Promise<QueueConsumers | undefined> {
  switch (options.consumers ?? 'process') {
    case 'off':
      return undefined;
    case 'in-process':
      return startConsumers(provisioned, sqs, runtime, options.deliverTwice);
    case 'process': {
      const entry = new URL('./consumers.ts', import.meta.url).pathname;
      const logFile = join(options.stateDir, 'consumers.log');
      const env = {
        ...process.env,
        [QUEUES_ENV]: JSON.stringify(provisioned),
        [RUNTIME_ENV]: JSON.stringify(runtime),
        [DELIVER_TWICE_ENV]: String(Boolean(options.deliverTwice)),
      };
      /** Where the running process serves its invocation counts: a restarted one names a new port. */
      let statsUrl = '';
      const start = async () => {
        const proc = spawnService(process.execPath, ['--import', 'tsx', entry], logFile, env);
        eachLine(proc.child.stdout!, (line) => emf.take(line));
        const [, port] = await readyLine(proc, /^ready (\d+)/m, logFile);
        statsUrl = `http://127.0.0.1:${port}${INVOCATIONS_PATH}`;
        return proc;
      };
      // One that dies mid-batch is replaced, as Lambda replaces an instance; its batch comes back after the visibility timeout.
      const supervised = await supervise('consumers', start, () => options.onRestart?.('consumers'));
      return {
        get pid() {
          return supervised.pid;
        },
        invocations: async () => {
          const res = await fetch(statsUrl);
          if (!res.ok) throw new Error(`the consumers' process answered ${res.status} at ${statsUrl}`);
          return (await res.json()) as InvocationCounts;
        },
        stop: () => supervised.stop(),
      };
    }
  }
}
