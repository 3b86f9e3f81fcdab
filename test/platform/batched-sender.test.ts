import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSqsCaller } from '../../shared/platform/clients/sqs-calls';
import { BatchedSender, QueueSendError } from '../../shared/platform/queue/batched-sender';
import { depth, queueWithDeadLetters, testSqs } from '../support/queues';

const sqs = testSqs();
/** A caller of SQS at this endpoint, as the functions make one, with test credentials. */
const callerAt = (endpoint: string) =>
  createSqsCaller({ region: 'us-east-1', endpoint, credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }), maxAttempts: 2 });
const call = callerAt(process.env.AWS_ENDPOINT_URL!);

/** The server listening on loopback, and its address as an endpoint. */
async function endpointOf(server: Server): Promise<string> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

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
    const sender = new BatchedSender<number>(call, { queueUrl: queue.url, timeoutMs: 3_000, itemsPerMessage: 25, encode: (items) => JSON.stringify(items) });

    await Promise.all(Array.from({ length: 60 }, (_, i) => sender.send(i)));

    const messages = (await receiveAll(queue.url)).map((b) => JSON.parse(b) as number[]);
    expect(messages.map((m) => m.length).sort((a, b) => a - b)).toEqual([10, 25, 25]);
    expect(messages.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it('sends each item in a message and call of its own when alone, as a Lambda instance does', async () => {
    // Prepare
    const queue = await queueWithDeadLetters(sqs, 5);
    const sender = new BatchedSender<number>(call, {
      queueUrl: queue.url,
      timeoutMs: 3_000,
      itemsPerMessage: 25,
      encode: (items) => JSON.stringify(items),
      alone: true,
    });

    // Act: sent in the same turn, which would put them in one message otherwise
    await Promise.all([1, 2, 3].map((i) => sender.send(i)));

    // Assess
    const messages = (await receiveAll(queue.url)).map((b) => JSON.parse(b) as number[]);
    expect(messages.sort((a, b) => a[0]! - b[0]!)).toEqual([[1], [2], [3]]);
  });

  it('neither sends nor retries a call whose deadline has passed', async () => {
    // Prepare
    const queue = await queueWithDeadLetters(sqs, 5);

    // Act
    const late = await call('SendMessageBatch', { QueueUrl: queue.url, Entries: [{ Id: '0', MessageBody: 'late' }] }, Date.now() - 1).then(
      () => 'answered',
      (error: Error) => error.name,
    );

    // Assess
    expect(late).toBe('TimeoutError');
    expect(await depth(sqs, queue.url)).toBe(0);
  });

  it('fails a call whose answer is still being read at its deadline as timed out, without trying again', async () => {
    // Prepare: an endpoint that answers its headers and the start of a body, then nothing more.
    let asked = 0;
    const stalling = createServer((_request, response) => {
      asked += 1;
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': '100' });
      response.write('{"Successful":');
    });
    const stalled = callerAt(await endpointOf(stalling));

    try {
      // Act
      const outcome = await stalled('SendMessageBatch', { QueueUrl: 'http://127.0.0.1/000000000000/q', Entries: [] }, Date.now() + 300).then(
        () => 'answered',
        (error: Error) => error.name,
      );

      // Assess: the deadline's own error, not the socket's, which a caller could take for a lost connection worth another try.
      expect(outcome).toBe('TimeoutError');
      expect(asked).toBe(1);
    } finally {
      stalling.closeAllConnections();
      stalling.close();
    }
  });

  it('tells each caller the fate of its own message when part of a batch fails', async () => {
    // Prepare: one message per item; the emulator refuses a body with a NUL character, as SQS does.
    const queue = await queueWithDeadLetters(sqs, 5);
    const sender = new BatchedSender<string>(call, { queueUrl: queue.url, timeoutMs: 3_000, itemsPerMessage: 1, encode: ([item]) => item! });

    // Act
    const outcomes = await Promise.allSettled(['first', 'bad\u0000body', 'third'].map((body) => sender.send(body)));

    // Assess
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(QueueSendError);
    expect(await depth(sqs, queue.url)).toBe(2);
  });

  it('fails every caller of a call SQS refuses, with its error type, and of one unanswered past the deadline', async () => {
    // Prepare: a queue that does not exist, and an endpoint that takes the connection but never answers.
    const missing = new BatchedSender<number>(call, {
      queueUrl: `${process.env.AWS_ENDPOINT_URL}/000000000000/no-such-queue`,
      timeoutMs: 3_000,
      itemsPerMessage: 1,
      encode: String,
    });
    const silent = createServer(() => undefined);
    const unanswered = callerAt(await endpointOf(silent));
    const slow = new BatchedSender<number>(unanswered, { queueUrl: 'http://127.0.0.1/000000000000/q', timeoutMs: 300, itemsPerMessage: 1, encode: String });

    try {
      // Act
      const refused = await Promise.allSettled([missing.send(1), missing.send(2)]);
      const timedOut = await Promise.allSettled([slow.send(1)]);

      // Assess
      expect(refused.map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({
        name: 'SqsCallFailed',
        type: expect.stringMatching(/NonExistentQueue|QueueDoesNotExist/),
      });
      expect(timedOut[0]!.status).toBe('rejected');
      expect(String((timedOut[0] as PromiseRejectedResult).reason)).toMatch(/abort|timeout/i);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
