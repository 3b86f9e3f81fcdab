import { CfnOutput, Duration, type Stack } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import {
  FAILED_MESSAGES_KEPT_DAYS,
  queueNamesOf,
  queues,
  visibilityTimeoutSeconds,
  type FunctionSpec,
  type QueueName,
  type Trigger,
} from '../../functions/table';

type QueueTrigger = Extract<Trigger, { kind: 'queue' }>;

/**
 * The table's queues, each with its DLQ, TLS only, visibility six times its consumer's timeout,
 * and their consumers (the writer): event source mappings reporting partial batch failures.
 * Its resources are the stack's own children (see stack.ts).
 */
export class Queues {
  private readonly byName = new Map<QueueName, { queue: Queue; deadLetters: Queue }>();

  /** namePrefix: the start of each queue's name (namePrefixOf in stage.ts). */
  constructor(stack: Stack, namePrefix: string) {
    for (const name of Object.keys(queues) as QueueName[]) {
      const spec = queues[name];
      const names = queueNamesOf(name, namePrefix);
      const deadLetters = new Queue(stack, `${name}Dlq`, {
        queueName: names.deadLetter,
        retentionPeriod: Duration.days(FAILED_MESSAGES_KEPT_DAYS),
        enforceSSL: true,
        encryption: QueueEncryption.SQS_MANAGED,
      });
      const queue = new Queue(stack, `${name}Queue`, {
        queueName: names.queue,
        visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds(name)),
        deadLetterQueue: { queue: deadLetters, maxReceiveCount: spec.maxReceiveCount },
        enforceSSL: true,
        encryption: QueueEncryption.SQS_MANAGED,
      });
      this.byName.set(name, { queue, deadLetters });
      new CfnOutput(stack, `${name}QueueUrl`, { value: queue.queueUrl });
    }
  }

  /** Each queue and its DLQ, by the table's queue name. */
  get all(): ReadonlyMap<QueueName, { queue: Queue; deadLetters: Queue }> {
    return this.byName;
  }

  queue(name: QueueName): Queue {
    return this.byName.get(name)!.queue;
  }

  /** Has a function consume a queue in batches, as its queue trigger says. */
  consume(spec: FunctionSpec, trigger: QueueTrigger, fn: IFunction): void {
    const mappingConcurrency = Math.max(2, trigger.maxConcurrency);
    // Fewer instances than the mapping's batches in flight would throttle the mapping itself.
    if (spec.concurrencyCap !== undefined && spec.concurrencyCap < mappingConcurrency) {
      throw new Error(`${spec.id}: its concurrency cap ${spec.concurrencyCap} is below its queue trigger's maximum concurrency ${mappingConcurrency}`);
    }
    fn.addEventSource(
      new SqsEventSource(this.queue(trigger.queue), {
        batchSize: trigger.batchSize,
        maxBatchingWindow: trigger.maxBatchingWindowSeconds ? Duration.seconds(trigger.maxBatchingWindowSeconds) : undefined,
        maxConcurrency: mappingConcurrency,
        reportBatchItemFailures: true,
      }),
    );
  }
}
