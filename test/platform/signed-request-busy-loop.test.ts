import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSignedRequester, readBody, serviceLocation } from '../../shared/platform/clients/aws-http';
import { createSqsCaller } from '../../shared/platform/clients/sqs-calls';
import { holdTheLoop } from '../support/held-loop';
import { depth, queueWithDeadLetters, testSqs } from '../support/queues';

const sqs = testSqs();
const endpoint = process.env.AWS_ENDPOINT_URL!;
const emulatorPort = Number(new URL(endpoint).port);
const credentials = async () => ({ accessKeyId: 'local', secretAccessKey: 'local' });

/** One turn of the loop: a request sent now has been written to its socket by its end. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("a signed request's timeouts, with the event loop held", () => {
  it("reads an answer that arrived while the loop was held before it decides that the caller's deadline passed", async () => {
    // Prepare: a kept-alive connection to the emulator already open, so the send goes out at once.
    const queue = await queueWithDeadLetters(sqs, 5);
    const call = createSqsCaller({ region: 'us-east-1', endpoint, credentials, maxAttempts: 2 });
    await call('GetQueueAttributes', { QueueUrl: queue.url, AttributeNames: ['QueueArn'] });

    // Act: the message goes out with 300 ms to go, the emulator answers at once, and the loop is held past the deadline until the answer waits unread.
    const sent = call<{ MessageId?: string }>('SendMessage', { QueueUrl: queue.url, MessageBody: 'answered in time' }, Date.now() + 300);
    await nextTurn();
    holdTheLoop(600, emulatorPort);

    // Assess: the send succeeded, once.
    await expect(sent).resolves.toMatchObject({ MessageId: expect.any(String) });
    expect(await depth(sqs, queue.url)).toBe(1);
  });

  it('reads an answer that arrived while the loop was held before it decides that the connection went idle', async () => {
    // Prepare: a requester whose connections may be idle 300 ms, its connection already open.
    const queue = await queueWithDeadLetters(sqs, 5);
    const send = createSignedRequester({ service: 'sqs', region: 'us-east-1', credentials, uriEscapePath: true, timeoutMs: 300 });
    const location = serviceLocation('sqs', 'us-east-1', endpoint);
    const request = (action: string, input: object) =>
      send(location, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
        body: JSON.stringify(input),
      });
    await readBody(await request('GetQueueAttributes', { QueueUrl: queue.url, AttributeNames: ['QueueArn'] }), 65_536, () => new Error('too large'));

    // Act: the emulator answers at once, and the loop is held past the idle timeout until the answer waits unread.
    const answered = request('SendMessage', { QueueUrl: queue.url, MessageBody: 'answered in time' });
    await nextTurn();
    holdTheLoop(600, emulatorPort);
    const response = await answered;

    // Assess
    expect(response.statusCode).toBe(200);
    expect(JSON.parse((await readBody(response, 65_536, () => new Error('too large'))).toString())).toMatchObject({ MessageId: expect.any(String) });
  });

  it('still fails a request whose connection stays idle past the timeout', async () => {
    // Prepare: a server that takes the request and never answers.
    const silent = createServer(() => undefined);
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const send = createSignedRequester({ service: 'sqs', region: 'us-east-1', credentials, uriEscapePath: true, timeoutMs: 300 });
    const location = serviceLocation('sqs', 'us-east-1', `http://127.0.0.1:${(silent.address() as AddressInfo).port}`);

    try {
      // Act
      const answered = send(location, { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0' }, body: '{}' });

      // Assess
      await expect(answered).rejects.toThrow('sqs did not answer within 300 ms');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
