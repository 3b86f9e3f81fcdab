import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { BatchedSender, QueueSendError } from '../../shared/platform/queue/batched-sender';
import { depth, queueWithDeadLetters, testSqs } from '../support/queues';

const sqs = testSqs();

async function receiveAll(url: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }));
    if (!Messages?.length) return bodies;
    bodies.push(...Messages.map((m) => m.Body!));
  }
}

describe('BatchedSender against the emulator', () => {
  it('packs items sent in the same turn into few messages', async () => {
    const queue = await queueWithDeadLetters(sqs, 5);
    const sender = new BatchedSender<number>(sqs, { queueUrl: queue.url, timeoutMs: 3_000, itemsPerMessage: 25, encode: (items) => JSON.stringify(items) });

    await Promise.all(Array.from({ length: 60 }, (_, i) => sender.send(i)));

    const messages = (await receiveAll(queue.url)).map((b) => JSON.parse(b) as number[]);
    expect(messages.map((m) => m.length).sort((a, b) => a - b)).toEqual([10, 25, 25]);
    expect(messages.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it('tells each caller the fate of its own message when part of a batch fails', async () => {
    // Prepare: one message per item; the emulator refuses a body with a NUL character, as SQS does.
    const queue = await queueWithDeadLetters(sqs, 5);
    const sender = new BatchedSender<string>(sqs, { queueUrl: queue.url, timeoutMs: 3_000, itemsPerMessage: 1, encode: ([item]) => item! });

    // Act
    const outcomes = await Promise.allSettled(['first', 'bad\u0000body', 'third'].map((body) => sender.send(body)));

    // Assess
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(QueueSendError);
    expect(await depth(sqs, queue.url)).toBe(2);
  });
});
