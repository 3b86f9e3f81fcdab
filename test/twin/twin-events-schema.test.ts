/**
 * The twin's events held against a peer's idea of them: Powertools Parser's schemas for the events
 * API Gateway, the SQS event source mapping and SES hand to Lambda. Each event is built the way the
 * twin builds it for a function, through the gateway, the poller and the SMTP listener.
 */
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { APIGatewayProxyEventV2Schema, SesRecordSchema, SesSchema, SqsSchema } from '@aws-lambda-powertools/parser/schemas';
import type { APIGatewayProxyEventV2, SESEvent, SQSEvent } from 'aws-lambda';
import { createTransport } from 'nodemailer';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startGateway, type Gateway } from '../../infra/twin/events/gateway';
import type { Poller } from '../../infra/twin/events/poller';
import { parseVerdicts } from '../../infra/twin/events/ses-event';
import { startSmtpListener, type SmtpListener } from '../../infra/twin/events/smtp';
import { storeRawMail } from '../support/mail';
import { pollQueue, queueWithDeadLetters, testSqs } from '../support/queues';
import { until } from '../../shared/platform/wait';

/**
 * SesSchema with dmarcPolicy optional. AWS documents that the receipt carries dmarcPolicy only when
 * the message fails DMARC (receiving-email-notifications-contents: "This field only appears if the
 * message fails DMARC authentication"), and AWS's own Lambda-action sample event
 * (receiving-email-action-lambda-event) has none. Powertools requires it on every event, and its
 * own sample (tests/events/ses/base.json) pairs "reject" with a PASS verdict, which AWS says does
 * not happen; so a genuine SES event for mail that passes DMARC fails SesSchema. The twin follows
 * AWS; only this one field is relaxed, everything else is checked as Powertools checks it.
 */
const receiptSchema = SesRecordSchema.shape.ses.shape.receipt;
const SesEventAsDocumentedSchema = SesSchema.extend({
  Records: z
    .array(
      SesRecordSchema.extend({
        ses: SesRecordSchema.shape.ses.extend({ receipt: receiptSchema.extend({ dmarcPolicy: receiptSchema.shape.dmarcPolicy.optional() }) }),
      }),
    )
    .nonempty(),
});

describe("the twin's events, parsed with Powertools Parser's schemas", () => {
  it('an HTTP API payload 2.0 event from the gateway, with a body, a query string, cookies and headers', async () => {
    // Prepare
    const events: APIGatewayProxyEventV2[] = [];
    const gateway: Gateway = await startGateway(
      [{ method: 'POST', path: '/items/{itemId}/orders', invoke: async (event) => (events.push(event), { statusCode: 202 }) }],
      0,
      () => undefined,
    );

    // Act
    try {
      await fetch(`${gateway.url}/items/sneaker/orders?ref=mail&ref=home`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: 'sid=1.abc; theme=dark', 'idempotency-key': 'k-1', 'user-agent': 'surge-test' },
        body: '{"quantity":1}',
      });
    } finally {
      await gateway.close();
    }

    // Assess
    const [event] = events;
    expect(event).toMatchObject({ body: '{"quantity":1}', rawQueryString: 'ref=mail&ref=home', cookies: ['sid=1.abc', 'theme=dark'] });
    // parse drops what the schema does not know, so equality also says the twin sends nothing it does not know.
    expect(APIGatewayProxyEventV2Schema.parse(event)).toStrictEqual(event);
  });

  describe('an SQS event from the poller', () => {
    const sqs = testSqs();
    let poller: Poller | undefined;
    afterEach(() => poller?.stop());

    it('with a batch of two records', async () => {
      // Prepare
      const queue = await queueWithDeadLetters(sqs, 5);
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queue.url,
          Entries: [
            { Id: '0', MessageBody: '{"n":1}' },
            { Id: '1', MessageBody: '{"n":2}', MessageAttributes: { kind: { DataType: 'String', StringValue: 'order' } } },
          ],
        }),
      );
      const events: SQSEvent[] = [];

      // Act
      poller = pollQueue(sqs, queue, async (event) => void events.push(event), { batchSize: 2, maxBatchingWindowSeconds: 1 });
      await until(async () => events.length > 0, 60_000, 'the batch');

      // Assess
      const [event] = events;
      expect(event!.Records).toHaveLength(2);
      expect(SqsSchema.parse(event)).toStrictEqual(event);
    });
  });

  describe('an SES receipt event from the SMTP listener', () => {
    const DOMAIN = 'inbound.surge.test';
    const listeners: SmtpListener[] = [];
    const events: SESEvent[] = [];
    afterAll(() => Promise.all(listeners.map((l) => l.close())));

    /** Sends a message through a listener whose SES reports these verdicts; the event it hands over. */
    async function receiptEventFor(verdicts: string): Promise<SESEvent> {
      const listener = await startSmtpListener({
        port: 0,
        maxMessageBytes: 1024 * 1024,
        verdicts: parseVerdicts(verdicts),
        routes: [
          {
            domain: DOMAIN,
            functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:surge-receive-mail',
            invoke: async (event) => void events.push(event),
          },
        ],
        store: (messageId, raw) => storeRawMail(messageId, raw),
        onError: () => undefined,
      });
      listeners.push(listener);
      const sent = await createTransport({ url: listener.url, ignoreTLS: true }).sendMail({
        from: 'news@bits.example',
        to: `reader@${DOMAIN}`,
        subject: 'Issue 1',
        text: 'hello',
      });
      const messageId = /queued as ([a-z0-9]+)/.exec(sent.response)![1]!;
      const ofMessage = () => events.find((e) => e.Records[0]!.ses.mail.messageId === messageId);
      await until(async () => ofMessage() !== undefined, 60_000, 'the receipt event');
      return ofMessage()!;
    }

    it('with every verdict PASS, and so no dmarcPolicy', async () => {
      // Act
      const event = await receiptEventFor('');

      // Assess
      const { receipt } = event.Records[0]!.ses;
      expect(receipt.dmarcPolicy).toBeUndefined();
      expect(SesEventAsDocumentedSchema.parse(event)).toStrictEqual(event);
    });

    it('with DMARC failing under a reject policy, which then passes Powertools’ own SesSchema', async () => {
      // Act
      const event = await receiptEventFor('dmarc=FAIL/reject');

      // Assess
      expect(event.Records[0]!.ses.receipt).toMatchObject({ dmarcVerdict: { status: 'FAIL' }, dmarcPolicy: 'reject' });
      expect(SesSchema.parse(event)).toStrictEqual(event);
    });
  });
});
