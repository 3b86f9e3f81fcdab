import { ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import type { Poller } from '../../infra/twin/events/poller';
import { until } from '../../shared/platform/wait';
import { depth, pollQueue, queueWithDeadLetters, testSqs } from '../support/queues';

const sqs = testSqs();

async function send(url: string, bodies: string[]) {
  await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: bodies.map((b, i) => ({ Id: String(i), MessageBody: b })) }));
}

describe('the queue poller against the emulator', () => {
  let poller: Poller | undefined;
  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
  });

  it('deletes the records that succeeded and lets a poison record reach the DLQ', async () => {
    // Prepare
    const queue = await queueWithDeadLetters(sqs, 2);
    await send(queue.url, ['ok-1', 'ok-2', 'poison', 'ok-3']);
    const deliveries: string[] = [];

    // Act
    poller = pollQueue(sqs, queue, async (event: SQSEvent): Promise<SQSBatchResponse> => {
      deliveries.push(...event.Records.map((r) => r.body));
      return { batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })) };
    });
    await until(async () => (await depth(sqs, queue.dlqUrl)) === 1);

    // Assess
    expect(deliveries.filter((b) => b.startsWith('ok-')).sort()).toEqual(['ok-1', 'ok-2', 'ok-3']);
    expect(deliveries.filter((b) => b === 'poison')).toHaveLength(2);
    expect(await depth(sqs, queue.url)).toBe(0);
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.dlqUrl }));
    expect(Messages?.[0]?.Body).toBe('poison');
  });

  it('retries the whole batch when the function throws', async () => {
    // Visible again only after the batching window has closed, as on AWS where visibility is far longer.
    const queue = await queueWithDeadLetters(sqs, 5, 3);
    await send(queue.url, ['a', 'b', 'c']);
    const deliveries: string[] = [];
    let calls = 0;
    const errors: string[] = [];

    poller = pollQueue(
      sqs,
      queue,
      async (event: SQSEvent) => {
        deliveries.push(...event.Records.map((r) => r.body));
        if (calls++ === 0) throw new Error('database away');
        return { batchItemFailures: [] };
      },
      { maxBatchingWindowSeconds: 1, onError: (error) => errors.push(error.message) },
    );
    await until(async () => deliveries.length >= 6 && (await depth(sqs, queue.url)) === 0);
    // Stopped, the poller has finished what it had in hand; with the queue empty, nothing more can come.
    await poller.stop();

    expect(deliveries.sort()).toEqual(['a', 'a', 'b', 'b', 'c', 'c']);
    expect(errors).toEqual(['database away']);
    expect(await depth(sqs, queue.dlqUrl)).toBe(0);
  });

  it('with the deliver-twice fault switch, hands every batch over twice, each copy shuffled, and deletes what either copy processed', async () => {
    // Prepare: one copy of each batch fails everything, the other nothing
    const queue = await queueWithDeadLetters(sqs, 5, 30);
    const bodies = Array.from({ length: 10 }, (_, i) => `m${i}`);
    await send(queue.url, bodies);
    const copies: string[][] = [];

    // Act
    poller = pollQueue(
      sqs,
      queue,
      async (event: SQSEvent): Promise<SQSBatchResponse> => {
        copies.push(event.Records.map((r) => r.body));
        return { batchItemFailures: copies.length % 2 ? event.Records.map((r) => ({ itemIdentifier: r.messageId })) : [] };
      },
      { deliverTwice: true },
    );
    await until(async () => copies.flat().length >= 20 && (await depth(sqs, queue.url)) === 0);

    // Assess: each message twice, in the orders of two shuffles (ten messages: the same order twice by chance once in 3.6 million)
    expect(copies.flat().sort()).toEqual([...bodies, ...bodies].sort());
    expect(copies.some((copy, i) => i > 0 && copy.join() !== copies[i - 1]!.join())).toBe(true);
    expect(await depth(sqs, queue.dlqUrl)).toBe(0);
  });
});
