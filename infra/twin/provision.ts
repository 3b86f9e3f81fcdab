import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  asyncFailuresQueueOf,
  buckets,
  FAILED_MESSAGES_KEPT_DAYS,
  functions,
  queueNamesOf,
  queues,
  visibilityTimeoutSeconds,
  type QueueName,
} from '../../functions/table';

const KEPT_AS_FAILED = { MessageRetentionPeriod: String(FAILED_MESSAGES_KEPT_DAYS * 24 * 3600) };

export interface ProvisionedQueue {
  url: string;
  arn: string;
  deadLetterUrl: string;
}

/** Creates in the emulator what the CDK stack creates on AWS: each queue with its DLQ (their names after `queuePrefix`), and the buckets. */
export async function provision(sqs: SQSClient, s3: S3Client, queuePrefix = ''): Promise<Record<QueueName, ProvisionedQueue>> {
  const entries = await Promise.all(
    (Object.keys(queues) as QueueName[]).map(async (name) => {
      const spec = queues[name];
      const names = queueNamesOf(name);
      const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${queuePrefix}${names.deadLetter}`, Attributes: KEPT_AS_FAILED }));
      const dlqArn = await queueArn(sqs, dlq.QueueUrl!);
      const queue = await sqs.send(
        new CreateQueueCommand({
          QueueName: `${queuePrefix}${names.queue}`,
          Attributes: {
            VisibilityTimeout: String(visibilityTimeoutSeconds(name)),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: spec.maxReceiveCount }),
          },
        }),
      );
      return [name, { url: queue.QueueUrl!, arn: await queueArn(sqs, queue.QueueUrl!), deadLetterUrl: dlq.QueueUrl! }] as const;
    }),
  );
  await Promise.all(Object.values(buckets).map((b) => s3.send(new CreateBucketCommand({ Bucket: b.name }))));
  return Object.fromEntries(entries) as Record<QueueName, ProvisionedQueue>;
}

/** Each asynchronously invoked function's failures queue (its on-failure destination), as the stack makes it; their URLs by function id. */
export async function provisionAsyncFailures(sqs: SQSClient, queuePrefix = ''): Promise<Map<string, string>> {
  const asynchronous = functions.filter((spec) => spec.trigger.kind === 'ses');
  const created = await Promise.all(
    asynchronous.map((spec) => sqs.send(new CreateQueueCommand({ QueueName: `${queuePrefix}${asyncFailuresQueueOf(spec.id)}`, Attributes: KEPT_AS_FAILED }))),
  );
  return new Map(asynchronous.map((spec, i) => [spec.id, created[i]!.QueueUrl!]));
}

export async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  return Attributes!.QueueArn!;
}
