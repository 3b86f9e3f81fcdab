import { randomBytes } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SESEvent, SESReceipt } from 'aws-lambda';
import { insertInboxTokens } from '../../infra/twin/seed';
import { fixture } from './events';
import { signedInUsers, type SignedInUser } from './sessions';

const s3 = new S3Client({
  region: process.env.AWS_REGION,
  endpoint: process.env.AWS_ENDPOINT_URL,
  forcePathStyle: true,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

export interface Reader extends SignedInUser {
  address: string;
}

/** Signed-in users, each with an inbound address. */
export async function readers(count: number): Promise<Reader[]> {
  const users = await signedInUsers(count);
  const tokens = await insertInboxTokens(
    process.env.DATABASE_URL!,
    users.map((u) => u.id),
  );
  return users.map((u, i) => ({ ...u, address: `${tokens[i]}@${process.env.INBOUND_DOMAIN}` }));
}

/** A fresh id shaped like SES's. */
export const sesMessageId = () => randomBytes(20).toString('hex');

export interface MailSpec {
  from?: string;
  to?: string;
  subject?: string;
  listId?: string;
  listUnsubscribe?: string;
  html?: string;
  text?: string;
  headers?: string[];
}

/** A newsletter as mailers send it: multipart/alternative with text and HTML. */
export function newsletterMail(spec: MailSpec = {}): Buffer {
  const boundary = `b-${randomBytes(6).toString('hex')}`;
  const lines = [
    `From: ${spec.from ?? 'Weekly Bits <news@bits.example>'}`,
    `To: ${spec.to ?? 'reader@inbound.surge.test'}`,
    `Subject: ${spec.subject ?? 'Issue 1'}`,
    'Date: Wed, 7 Oct 2026 12:34:56 -0700',
    `Message-ID: <${randomBytes(8).toString('hex')}@bits.example>`,
    ...(spec.listId ? [`List-Id: ${spec.listId}`] : []),
    ...(spec.listUnsubscribe ? [`List-Unsubscribe: ${spec.listUnsubscribe}`] : []),
    ...(spec.headers ?? []),
    'MIME-Version: 1.0',
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    spec.text ?? 'Hello, reader.',
    `--${boundary}`,
    'Content-Type: text/html; charset=utf-8',
    '',
    spec.html ?? '<p>Hello, <b>reader</b>.</p>',
    `--${boundary}--`,
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

/** Puts the raw message where SES's S3 action would for this message id. */
export async function storeRawMail(messageId: string, raw: Buffer | string): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: process.env.RAW_MAIL_BUCKET, Key: `${process.env.RAW_MAIL_PREFIX}${messageId}`, Body: raw }));
}

/** The SES receipt event for a stored message, from a recorded-shape fixture under test/events/ses/. */
export function sesEvent(
  messageId: string,
  recipients: string[],
  receipt: Partial<SESReceipt> = {},
  name: 'receipt' | 'receipt-no-dmarc' = 'receipt',
): SESEvent {
  const event = fixture<SESEvent>(`ses/${name}.json`);
  const record = event.Records[0]!;
  record.ses.mail.messageId = messageId;
  record.ses.mail.destination = recipients;
  record.ses.receipt = { ...record.ses.receipt, recipients, ...receipt };
  return event;
}
