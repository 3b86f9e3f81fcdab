import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { startPoller, type Poller } from '../../infra/local/poller';
import { queueArn } from '../../infra/local/provision';

const sqs = new SQSClient({ region: 'us-east-1', endpoint: process.env.AWS_ENDPOINT_URL!, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

async function queueWithDeadLetters(maxReceiveCount: number, visibilityTimeoutSeconds = 1) {
  const name = `poller-${randomBytes(4).toString('hex')}`;
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

async function send(url: string, bodies: string[]) {
  await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: bodies.map((b, i) => ({ Id: String(i), MessageBody: b })) }));
}

async function depth(url: string): Promise<number> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
  );
  return Number(Attributes!.ApproximateNumberOfMessages) + Number(Attributes!.ApproximateNumberOfMessagesNotVisible);
}

async function until(condition: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the queue poller against the emulator', () => {
  let poller: Poller | undefined;
  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
  });

  it('deletes the records that succeeded and lets a poison record reach the DLQ', async () => {
    // Prepare
    const queue = await queueWithDeadLetters(2);
    await send(queue.url, ['ok-1', 'ok-2', 'poison', 'ok-3']);
    const deliveries: string[] = [];

    // Act
    poller = startPoller({
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: 'us-east-1',
      batchSize: 10,
      maxBatchingWindowSeconds: 0,
      maxConcurrency: 1,
      onError: () => undefined,
      invoke: async (event: SQSEvent): Promise<SQSBatchResponse> => {
        deliveries.push(...event.Records.map((r) => r.body));
        return { batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });
    await until(async () => (await depth(queue.dlqUrl)) === 1);

    // Assess
    expect(deliveries.filter((b) => b.startsWith('ok-')).sort()).toEqual(['ok-1', 'ok-2', 'ok-3']);
    expect(deliveries.filter((b) => b === 'poison')).toHaveLength(2);
    expect(await depth(queue.url)).toBe(0);
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.dlqUrl }));
    expect(Messages?.[0]?.Body).toBe('poison');
  });

  it('retries the whole batch when the function throws', async () => {
    // Visible again only after the batching window has closed, as on AWS where visibility is far longer.
    const queue = await queueWithDeadLetters(5, 3);
    await send(queue.url, ['a', 'b', 'c']);
    const deliveries: string[] = [];
    let calls = 0;
    const errors: string[] = [];

    poller = startPoller({
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: 'us-east-1',
      batchSize: 10,
      maxBatchingWindowSeconds: 1,
      maxConcurrency: 1,
      onError: (error) => errors.push(error.message),
      invoke: async (event: SQSEvent) => {
        deliveries.push(...event.Records.map((r) => r.body));
        if (calls++ === 0) throw new Error('database away');
        return { batchItemFailures: [] };
      },
    });
    await until(async () => deliveries.length >= 6 && (await depth(queue.url)) === 0);
    await new Promise((r) => setTimeout(r, 500));

    expect(deliveries.sort()).toEqual(['a', 'a', 'b', 'b', 'c', 'c']);
    expect(errors).toEqual(['database away']);
    expect(await depth(queue.dlqUrl)).toBe(0);
  });
});
