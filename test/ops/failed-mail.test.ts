import { randomBytes } from 'node:crypto';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functions } from '../../functions/table';
import { reinvokeFailures } from '../../infra/ops/reinvoke-failures';
import { asyncFailureRecord } from '../../infra/twin/events/async-failure';
import { startLambdaApi, SYNC_PAYLOAD_MAX_BYTES, type LambdaApi } from '../../infra/twin/events/lambda-api';
import { functionArnOf } from '../../infra/twin/events/ses-event';
import { runnerOf } from '../../infra/twin/lambda/runners';
import { newsletterMail, readers, sesEvent, sesMessageId, storeRawMail } from '../support/mail';
import { testSqs } from '../support/queues';

const RECEIVE_MAIL = functions.find((f) => f.id === 'receive-mail')!;
const sqs = testSqs();
const decoded = (payload?: Uint8Array) => JSON.parse(new TextDecoder().decode(payload));
const encoded = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
/** An SES event the function refuses whatever the stores say: its record is not SES's shape. */
const malformedEvent = { Records: [{ eventSource: 'aws:s3' }] };

let api: LambdaApi;
let lambda: LambdaClient;
let db: Awaited<ReturnType<typeof createConnection>>;

beforeAll(async () => {
  const runtime = { kind: 'source' } as const;
  api = await startLambdaApi(0, new Map(['health', 'receive-mail'].map((id) => [id, runnerOf(id, runtime)])));
  lambda = new LambdaClient({ region: 'us-east-1', endpoint: api.url, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  db = await createConnection(process.env.DATABASE_URL!);
});

afterAll(async () => {
  lambda.destroy();
  await api.close();
  await db.end();
});

describe("the twin's Lambda Invoke API", () => {
  it('runs a function named by name or ARN and answers its result, as the SDK reads it', async () => {
    // Act
    const [byName, byArn] = await Promise.all(
      ['surge-health', `${functionArnOf('surge-health')}:$LATEST`].map((name) =>
        lambda.send(new InvokeCommand({ FunctionName: name, Payload: encoded({ rawPath: '/health', requestContext: { http: { method: 'GET' } } }) })),
      ),
    );

    // Assess
    for (const answer of [byName!, byArn!]) {
      expect(answer.StatusCode).toBe(200);
      expect(answer.FunctionError).toBeUndefined();
      expect(answer.ExecutedVersion).toBe('$LATEST');
      expect(decoded(answer.Payload).statusCode).toBe(200);
    }
  });

  it("answers a function's error as Lambda does: 200, Unhandled, its type and message", async () => {
    // Act
    const answer = await lambda.send(new InvokeCommand({ FunctionName: 'surge-receive-mail', Payload: encoded(malformedEvent) }));

    // Assess
    expect(answer.StatusCode).toBe(200);
    expect(answer.FunctionError).toBe('Unhandled');
    expect(decoded(answer.Payload)).toEqual({ errorType: 'Error', errorMessage: '1 of 1 SES records were malformed' });
  });

  it('refuses what it does not model, and what Lambda refuses, by the errors the SDK names', async () => {
    // Act
    const refusals = await Promise.all(
      [
        new InvokeCommand({ FunctionName: 'surge-no-such-function', Payload: encoded({}) }),
        new InvokeCommand({ FunctionName: 'surge-health', InvocationType: 'Event', Payload: encoded({}) }),
        new InvokeCommand({ FunctionName: 'surge-health', Payload: new TextEncoder().encode('{ not json') }),
        new InvokeCommand({ FunctionName: 'surge-health', Payload: encoded({ padding: 'x'.repeat(SYNC_PAYLOAD_MAX_BYTES) }) }),
      ].map((command) =>
        lambda.send(command).then(
          () => 'answered',
          (error: Error) => error.name,
        ),
      ),
    );
    const dryRun = await lambda.send(new InvokeCommand({ FunctionName: 'surge-health', InvocationType: 'DryRun' }));

    // Assess
    expect(refusals).toEqual(['ResourceNotFoundException', 'InvalidParameterValueException', 'InvalidRequestContentException', 'RequestTooLargeException']);
    expect(dryRun.StatusCode).toBe(204);
  });
});

describe('npm run redrive -- --failed-mail', () => {
  it("files each kept record's mail by invoking receive-mail again, deletes what it filed, and keeps the rest for one try a run", async () => {
    // Prepare: a failures queue of this test's own holding Lambda's records of a mail whose
    // retries were spent, of an event the function refuses, and a message that is no record.
    const [reader] = await readers(1);
    const messageId = sesMessageId();
    await storeRawMail(messageId, newsletterMail({ to: reader!.address }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `test-failures-${randomBytes(4).toString('hex')}` }));
    const arn = functionArnOf('surge-receive-mail');
    for (const body of [
      asyncFailureRecord(arn, sesEvent(messageId, [reader!.address]), 3, new Error('Command timed out')),
      asyncFailureRecord(arn, malformedEvent, 3, new Error('1 of 1 SES records were malformed')),
      'a message that is not an invocation record',
    ])
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: typeof body === 'string' ? body : JSON.stringify(body) }));
    const failures = { queueUrl: QueueUrl!, functionName: 'surge-receive-mail', timeoutSeconds: RECEIVE_MAIL.timeoutSeconds };

    // Act
    const first = await reinvokeFailures(sqs, lambda, failures);
    const second = await reinvokeFailures(sqs, lambda, failures);

    // Assess
    expect(first).toEqual({
      reinvoked: 1,
      failed: 1,
      unreadable: 1,
      errors: [JSON.stringify({ errorType: 'Error', errorMessage: '1 of 1 SES records were malformed' })],
    });
    const [issues] = await db.query<RowDataPacket[]>('SELECT user_id FROM issues WHERE ses_message_id = ?', [messageId]);
    expect(issues.map((r) => Number(r.user_id))).toEqual([reader!.id]);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    expect({ visible: Number(Attributes!.ApproximateNumberOfMessages), hidden: Number(Attributes!.ApproximateNumberOfMessagesNotVisible) }).toEqual({
      visible: 0,
      hidden: 2,
    });
    expect(second).toEqual({ reinvoked: 0, failed: 0, unreadable: 0, errors: [] });
  });

  it("deletes nothing when the answer is not Lambda's, as the emulator's to a client that was not pointed at the twin's API", async () => {
    // Prepare: the emulator answers 200 to any POST (it took this one for S3's DeleteObjects).
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `test-failures-${randomBytes(4).toString('hex')}` }));
    const record = asyncFailureRecord(functionArnOf('surge-receive-mail'), sesEvent(sesMessageId(), []), 3, new Error('Command timed out'));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: JSON.stringify(record) }));
    const misdirected = new LambdaClient({
      region: 'us-east-1',
      endpoint: process.env.AWS_ENDPOINT_URL!,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });

    // Act
    const run = reinvokeFailures(sqs, misdirected, { queueUrl: QueueUrl!, functionName: 'surge-receive-mail', timeoutSeconds: 1 });

    // Assess
    await expect(run).rejects.toThrow("the answer (HTTP 200) is not Lambda's");
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessagesNotVisible'] }));
    expect(Number(Attributes!.ApproximateNumberOfMessagesNotVisible)).toBe(1);
    misdirected.destroy();
  });
});
