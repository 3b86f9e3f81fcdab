/** SES's receiving side in the twin: an SMTP listener that stores each message in the raw-mail bucket and invokes the mail routes. */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { inboundMail } from '../../functions/table';
import { TWIN_RAW_MAIL_BUCKET } from './deployment';
import { logFunctionError } from './lambda/function-errors';
import type { TwinOptions } from './options';
import { passingVerdicts } from './events/ses-event';
import { SES_MAX_MESSAGE_BYTES, startSmtpListener, type MailRoute, type SmtpListener } from './events/smtp';

export function startInboundMail(s3: S3Client, routes: MailRoute[], options: Pick<TwinOptions, 'smtpPort' | 'verdicts'>): Promise<SmtpListener> {
  return startSmtpListener({
    port: options.smtpPort ?? inboundMail.smtpPort,
    routes,
    maxMessageBytes: SES_MAX_MESSAGE_BYTES,
    verdicts: options.verdicts ?? passingVerdicts(),
    store: async (messageId, raw) => {
      await s3.send(new PutObjectCommand({ Bucket: TWIN_RAW_MAIL_BUCKET, Key: `${inboundMail.prefix}${messageId}`, Body: raw, ContentType: 'message/rfc822' }));
    },
    onError: (error) => logFunctionError('smtp', error),
  });
}
