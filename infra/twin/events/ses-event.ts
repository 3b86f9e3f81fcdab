import { randomBytes } from 'node:crypto';
import type { SESEvent, SESMailHeader, SESReceiptStatus } from 'aws-lambda';

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
/** SES passes at most this much of the headers in the event and says when it cut them. */
const MAX_EVENT_HEADER_BYTES = 10 * 1024;

export type VerdictName = 'spam' | 'virus' | 'spf' | 'dkim' | 'dmarc';
export interface Verdicts {
  statuses: Record<VerdictName, SESReceiptStatus['status']>;
  dmarcPolicy?: 'none' | 'quarantine' | 'reject';
}

export const passingVerdicts = (): Verdicts => ({ statuses: { spam: 'PASS', virus: 'PASS', spf: 'PASS', dkim: 'PASS', dmarc: 'PASS' } });

/**
 * The twin's verdicts from SURGE_SES_VERDICTS, e.g. `spam=GRAY,dmarc=FAIL/reject`; every
 * verdict not named passes.
 */
export function parseVerdicts(spec: string | undefined): Verdicts {
  const verdicts = passingVerdicts();
  for (const item of (spec ?? '').split(',').filter(Boolean)) {
    const match = /^(spam|virus|spf|dkim|dmarc)=(PASS|FAIL|GRAY|PROCESSING_FAILED)(?:\/(none|quarantine|reject))?$/.exec(item.trim());
    if (!match) throw new Error(`SURGE_SES_VERDICTS: cannot read "${item}"; write e.g. spam=GRAY,dmarc=FAIL/reject`);
    verdicts.statuses[match[1] as VerdictName] = match[2] as SESReceiptStatus['status'];
    if (match[3]) verdicts.dmarcPolicy = match[3] as Verdicts['dmarcPolicy'];
  }
  return verdicts;
}

/** SES message ids are 20 to 40 lower-case letters and digits. */
export function sesMessageId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(40)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** The raw header section, unfolded, as SES lists it in the event, within SES's size cap. */
function headersOf(raw: Buffer): { headers: SESMailHeader[]; truncated: boolean } {
  const text = raw.subarray(0, 64 * 1024).toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  const section = end === -1 ? text : text.slice(0, end);
  const headers: SESMailHeader[] = [];
  let bytes = 0;
  for (const line of section.split(/\r?\n(?![ \t])/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const header = {
      name: line.slice(0, colon).trim(),
      value: line
        .slice(colon + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    };
    bytes += header.name.length + header.value.length + 4;
    if (bytes > MAX_EVENT_HEADER_BYTES) return { headers, truncated: true };
    headers.push(header);
  }
  return { headers, truncated: false };
}

export interface ReceivedMail {
  messageId: string;
  raw: Buffer;
  mailFrom: string;
  /** Every envelope recipient of the message. */
  destination: string[];
  /** Those of them the receipt rule matched. */
  recipients: string[];
  functionArn: string;
  verdicts: Verdicts;
  /** When the listener had the whole message, at the end of DATA: SES's "received". */
  receivedAt: Date;
}

/** The receipt event SES's Lambda action sends: headers and verdicts, never the body. */
export function sesEvent(mail: ReceivedMail): SESEvent {
  const { headers, truncated } = headersOf(mail.raw);
  const first = (name: string) => headers.find((h) => h.name.toLowerCase() === name)?.value;
  const list = (name: string) => headers.filter((h) => h.name.toLowerCase() === name).map((h) => h.value);
  const timestamp = mail.receivedAt.toISOString();
  const status = (name: VerdictName) => ({ status: mail.verdicts.statuses[name] });
  return {
    Records: [
      {
        eventSource: 'aws:ses',
        eventVersion: '1.0',
        ses: {
          mail: {
            timestamp,
            source: mail.mailFrom,
            messageId: mail.messageId,
            destination: mail.destination,
            headersTruncated: truncated,
            headers,
            commonHeaders: {
              returnPath: mail.mailFrom,
              from: list('from'),
              to: list('to'),
              date: first('date') ?? timestamp,
              messageId: first('message-id') ?? '',
              subject: first('subject') ?? '',
            },
          },
          receipt: {
            timestamp,
            // From receipt to this action, as SES measures it. SES reports whole milliseconds and never
            // 0; the twin's store and hand-off can take less than one, so it reports at least 1.
            processingTimeMillis: Math.max(1, Date.now() - mail.receivedAt.getTime()),
            recipients: mail.recipients,
            spamVerdict: status('spam'),
            virusVerdict: status('virus'),
            spfVerdict: status('spf'),
            dkimVerdict: status('dkim'),
            dmarcVerdict: status('dmarc'),
            // Only on a DMARC failure, as AWS documents ("This field only appears if the message fails
            // DMARC authentication", receiving-email-notifications-contents) and as AWS's sample Lambda
            // event shows, although Powertools' SesSchema requires it on every event.
            ...(mail.verdicts.statuses.dmarc === 'FAIL' && mail.verdicts.dmarcPolicy ? { dmarcPolicy: mail.verdicts.dmarcPolicy } : {}),
            action: { type: 'Lambda', invocationType: 'Event', functionArn: mail.functionArn },
          },
        },
      },
    ],
  } as SESEvent;
}

export const functionArnOf = (functionName: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionName}`;
