import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SESEvent } from 'aws-lambda';
import { createTransport } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AsyncFailureRecord } from '../../infra/twin/events/async-failure';
import { parseVerdicts } from '../../infra/twin/events/ses-event';
import { startSmtpListener, type SmtpListener } from '../../infra/twin/events/smtp';
import { fixture } from '../support/events';
import { storeRawMail } from '../support/mail';
import { until } from '../../shared/platform/wait';

const DOMAIN = 'inbound.surge.test';
const MAX_BYTES = 16 * 1024;
const s3 = new S3Client({
  region: process.env.AWS_REGION,
  endpoint: process.env.AWS_ENDPOINT_URL,
  forcePathStyle: true,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

/** The keys of an object and of every object inside it, as dotted paths: its shape without its values. */
function shape(value: unknown, path = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [path];
  return Object.entries(value).flatMap(([key, inner]) => shape(inner, path ? `${path}.${key}` : key));
}

describe("the twin's SMTP listener", () => {
  let listener: SmtpListener;
  const events: SESEvent[] = [];
  const kept: AsyncFailureRecord[] = [];
  let failuresToCome = 0;

  beforeAll(async () => {
    listener = await startSmtpListener({
      port: 0,
      maxMessageBytes: MAX_BYTES,
      verdicts: parseVerdicts('spam=GRAY,dmarc=FAIL/quarantine'),
      routes: [
        {
          domain: DOMAIN,
          functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:surge-receive-mail',
          invoke: async (event) => {
            if (failuresToCome > 0) {
              failuresToCome--;
              throw new Error('the function failed');
            }
            events.push(event);
          },
          keepFailure: async (record) => {
            kept.push(record);
          },
        },
      ],
      store: (messageId, raw) => storeRawMail(messageId, raw),
      onError: () => undefined,
    });
  });
  afterAll(() => listener.close());

  const smtp = () => createTransport({ url: listener.url, ignoreTLS: true });

  it('stores accepted mail where SES would and invokes the function with a receipt event of SES’s shape', async () => {
    // Act
    const sent = await smtp().sendMail({ from: 'news@bits.example', to: `reader@${DOMAIN}`, subject: 'Stored', text: 'hello' });
    const messageId = /queued as ([a-z0-9]+)/.exec(sent.response)![1]!;
    await until(async () => events.some((e) => e.Records[0]!.ses.mail.messageId === messageId), 60_000, 'the receipt event');

    // Assess
    const event = events.find((e) => e.Records[0]!.ses.mail.messageId === messageId)!;
    const stored = await s3.send(new GetObjectCommand({ Bucket: process.env.RAW_MAIL_BUCKET, Key: `${process.env.RAW_MAIL_PREFIX}${messageId}` }));
    expect(await stored.Body!.transformToString()).toContain('Subject: Stored');
    const recorded = fixture<SESEvent>('ses/receipt.json');
    expect(
      shape(event)
        .filter((p) => !p.startsWith('Records.0.ses.receipt.dmarcPolicy'))
        .sort(),
    ).toEqual(shape(recorded).sort());
    expect(event.Records[0]!.ses.receipt).toMatchObject({
      recipients: [`reader@${DOMAIN}`],
      spamVerdict: { status: 'GRAY' },
      virusVerdict: { status: 'PASS' },
      dmarcVerdict: { status: 'FAIL' },
      dmarcPolicy: 'quarantine',
    });
    expect(event.Records[0]!.ses.mail.commonHeaders.subject).toBe('Stored');
    expect(JSON.stringify(event)).not.toContain('hello');
  });

  it('refuses recipients at any other domain at RCPT', async () => {
    const sending = smtp().sendMail({ from: 'news@bits.example', to: 'someone@elsewhere.example', subject: 'x', text: 'x' });

    await expect(sending).rejects.toMatchObject({ responseCode: 550 });
  });

  it('takes a message of exactly the size limit, and refuses one byte more with 552', async () => {
    // Prepare: raw messages of lines under SMTP's 1,000 bytes, CRLF-terminated, padded to the byte.
    const rawOf = (bytes: number) => {
      const head = `From: news@bits.example\r\nTo: reader@${DOMAIN}\r\nSubject: exact\r\n\r\n`;
      const line = `${'x'.repeat(98)}\r\n`;
      const body = line.repeat(Math.floor((bytes - head.length) / line.length));
      // Ending in CRLF, as a message does, so nothing is added to it on the wire.
      return `${head}${body}${'y'.repeat(bytes - head.length - body.length - 2)}\r\n`;
    };
    const envelope = { from: 'news@bits.example', to: `reader@${DOMAIN}` };

    // Act
    const at = await smtp().sendMail({ envelope, raw: rawOf(MAX_BYTES) });
    const past = smtp().sendMail({ envelope, raw: rawOf(MAX_BYTES + 1) });

    // Assess
    expect(at.accepted).toEqual([`reader@${DOMAIN}`]);
    await expect(past).rejects.toMatchObject({ responseCode: 552 });
  });

  it('refuses a message over the size limit with 552', async () => {
    const sending = smtp().sendMail({ from: 'news@bits.example', to: `reader@${DOMAIN}`, subject: 'big', text: 'x'.repeat(MAX_BYTES * 2) });

    await expect(sending).rejects.toMatchObject({ responseCode: 552 });
  });

  it('retries a failed invocation as Lambda retries an asynchronous one', async () => {
    failuresToCome = 2;

    const sent = await smtp().sendMail({ from: 'news@bits.example', to: `reader@${DOMAIN}`, subject: 'Retried', text: 'x' });
    const messageId = /queued as ([a-z0-9]+)/.exec(sent.response)![1]!;

    await until(async () => events.some((e) => e.Records[0]!.ses.mail.messageId === messageId), 60_000, 'the retried receipt event');
    expect(failuresToCome).toBe(0);
    expect(kept).toEqual([]);
  });

  it('keeps an event whose retries are spent in the on-failure destination, as Lambda’s invocation record around it', async () => {
    // Prepare: the first try and both retries fail.
    failuresToCome = 3;

    // Act
    const sent = await smtp().sendMail({ from: 'news@bits.example', to: `reader@${DOMAIN}`, subject: 'Kept', text: 'x' });
    const messageId = /queued as ([a-z0-9]+)/.exec(sent.response)![1]!;

    // Assess
    const record = (await until(
      async () => kept.find((r) => (r.requestPayload as SESEvent).Records[0]!.ses.mail.messageId === messageId),
      60_000,
      'the kept record',
    ))!;
    expect(failuresToCome).toBe(0);
    expect(record).toMatchObject({
      version: '1.0',
      requestContext: {
        functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:surge-receive-mail:$LATEST',
        condition: 'RetriesExhausted',
        approximateInvokeCount: 3,
      },
      responseContext: { statusCode: 200, functionError: 'Unhandled' },
      responsePayload: { errorType: 'Error', errorMessage: 'the function failed' },
    });
    expect(events.some((e) => e.Records[0]!.ses.mail.messageId === messageId)).toBe(false);
  });
});
