import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { startPoller, type Poller, type PollerOptions } from '../../infra/twin/events/poller';
import { queueArn } from '../../infra/twin/provision';

export const testSqs = (endpoint = process.env.AWS_ENDPOINT_URL!) =>
  new SQSClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

/** A queue of the test's own, with a DLQ, so no other test's poller takes its messages. */
export async function queueWithDeadLetters(sqs: SQSClient, maxReceiveCount: number, visibilityTimeoutSeconds = 1) {
  const name = `test-${randomBytes(4).toString('hex')}`;
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: await queueArn(sqs, dlq.QueueUrl!), maxReceiveCount }),
      },
    }),
  );
  return { url: queue.QueueUrl!, arn: await queueArn(sqs, queue.QueueUrl!), dlqUrl: dlq.QueueUrl! };
}

export async function depth(sqs: SQSClient, url: string): Promise<number> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
  );
  return Number(Attributes!.ApproximateNumberOfMessages) + Number(Attributes!.ApproximateNumberOfMessagesNotVisible);
}

/** The twin's event source mapping on a test queue: small batches, no window, errors ignored. */
export function pollQueue(
  sqs: SQSClient,
  queue: { url: string; arn: string },
  invoke: (event: SQSEvent) => Promise<unknown>,
  overrides: Partial<Pick<PollerOptions, 'batchSize' | 'maxBatchingWindowSeconds' | 'maxConcurrency' | 'onError' | 'deliverTwice'>> = {},
): Poller {
  return startPoller({
    sqs,
    queueUrl: queue.url,
    queueArn: queue.arn,
    region: 'us-east-1',
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: 1,
    onError: () => undefined,
    invoke,
    ...overrides,
  });
}

/**
 * A test file's own order queue (with its DLQ, maxReceiveCount 5, a 30 s visibility), named in
 * RESERVATION_QUEUE_URL: the hand-off reads it on first use, after this, so the file's sends go there.
 */
export async function ownReservationQueue(sqs: SQSClient) {
  const queue = await queueWithDeadLetters(sqs, 5, 30);
  process.env.RESERVATION_QUEUE_URL = queue.url;
  return queue;
}
