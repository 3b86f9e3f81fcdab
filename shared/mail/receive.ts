import type { SESEvent } from 'aws-lambda';
import * as z from '../platform/zod';
import { takeMailRates } from '../limits/rate';
import { logger } from '../platform/logger';
import { usersByInboxToken } from './addresses';
import { inboxTokenOf } from './inbox-token';
import { fileIssue, senderLine } from './inbox';
import { mailLimits } from './limits';
import { identify } from './identity';
import type { NewsletterResolver } from './newsletters';
import { recordOutcomes, type OutcomeRecord } from './outcomes';
import { MailParserPool } from './isolated-parse';
import { oneLine } from './parse';
import { MailRejected } from './rejection';
import { readRawMail } from './raw-store';
import { gate, Receipt, senderAuthenticated } from './verdicts';

/** SES's id of a message, also the last part of its raw message's key. */
const MessageId = z.string().check(z.regex(/^[A-Za-z0-9._-]{1,64}$/));

const SesRecord = z.object({
  eventSource: z.literal('aws:ses'),
  ses: z.object({
    mail: z.object({
      messageId: MessageId,
      // Shown on the reader's quarantine list for mail never parsed; any length, cut when stored.
      commonHeaders: z.optional(z.object({ from: z.optional(z.array(z.string())), subject: z.optional(z.string()) })),
    }),
    receipt: Receipt,
  }),
});

type CommonHeaders = NonNullable<z.infer<typeof SesRecord>['ses']['mail']['commonHeaders']>;

/**
 * The domain of the first From address as SES read the headers, lower-cased ('' without one):
 * known before the message is read from S3 or parsed, so mail over a rate costs neither.
 */
function fromDomain(headers: CommonHeaders): string {
  const from = headers.from?.[0] ?? '';
  const address = /<([^<>]*)>\s*$/.exec(from)?.[1] ?? from;
  return address
    .slice(address.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();
}

export interface MailReceiverOptions {
  /** Only recipients at this domain can be readers. */
  domain: string;
  bucket: string;
  prefix: string;
  resolveNewsletter: NewsletterResolver;
  parserThreads: number;
}

/**
 * The SES receipt handler: for each record, gate on the verdicts, find the readers, take each
 * delivery from the mail rates (shared/limits), read the raw message from S3, parse and sanitise
 * it under the limits, find or create its newsletter and file the issue for every reader admitted.
 * Parsing and sanitising run on a thread of their own under hard time and memory limits. A
 * message that cannot be filed is recorded with its reason and never fails the invocation; only a dependency failing (S3, MySQL, Redis) does, so SES's retry repeats
 * it, and every step is idempotent on the SES message id (a retry takes from the rates again).
 */
export function mailReceiver({ domain, bucket, prefix, resolveNewsletter, parserThreads }: MailReceiverOptions) {
  const parser = new MailParserPool(parserThreads);

  async function receive(messageId: string, receipt: Receipt, headers: CommonHeaders): Promise<OutcomeRecord[]> {
    const rawKey = `${prefix}${messageId}`;
    const recipients = [...new Set(receipt.recipients.map((r) => r.toLowerCase()))];
    const outcome = (recipient: string, o: Omit<OutcomeRecord, 'sesMessageId' | 'recipient' | 'rawKey'>): OutcomeRecord => ({
      sesMessageId: messageId,
      recipient,
      rawKey,
      ...o,
    });

    const tokens = new Map(recipients.map((r) => [r, inboxTokenOf(r, domain)]));
    const users = await usersByInboxToken([...tokens.values()].filter((t): t is string => t !== undefined));
    const readers = recipients.flatMap((r) => {
      const userId = users.get(tokens.get(r) ?? '');
      return userId === undefined ? [] : [{ recipient: r, userId }];
    });
    const unknown = recipients.filter((r) => !users.has(tokens.get(r) ?? '')).map((r) => outcome(r, { outcome: 'dropped', reason: 'unknown-recipient' }));
    if (readers.length === 0) return unknown;

    const authenticated = senderAuthenticated(receipt);
    // What the reader is shown of mail held before it is parsed.
    const unparsed = { sender: oneLine(headers.from?.join(', '), 400), subject: oneLine(headers.subject, 500), authenticated };
    const verdict = gate(receipt);
    if (verdict.action !== 'file') {
      const kind = verdict.action === 'drop' ? 'dropped' : 'quarantined';
      return [
        ...unknown,
        ...readers.map((r) =>
          outcome(r.recipient, { outcome: kind, reason: verdict.reason, userId: r.userId, ...(kind === 'quarantined' ? { held: unparsed } : {}) }),
        ),
      ];
    }

    // Over a rate, mail is kept (quarantined, the reason naming the rate) for its reader to release.
    const refusals = await takeMailRates(
      { domain: fromDomain(headers), authenticated },
      readers.map((r) => r.userId),
    );
    const limited = readers.flatMap((r, i) =>
      refusals[i] ? [outcome(r.recipient, { outcome: 'quarantined', reason: refusals[i], userId: r.userId, held: unparsed })] : [],
    );
    const admitted = readers.filter((_, i) => !refusals[i]);
    if (admitted.length === 0) return [...unknown, ...limited];

    let filed: OutcomeRecord[];
    try {
      const mail = await parser.parse(await readRawMail(bucket, rawKey, mailLimits.maxMessageBytes));
      const identity = identify(mail, { authenticated });
      const newsletterId = await resolveNewsletter(identity);
      filed = await Promise.all(
        admitted.map(async (r) => {
          const result = await fileIssue({ userId: r.userId, newsletterId, newsletterName: identity.name, sesMessageId: messageId, mail });
          const held = { sender: senderLine(mail.from), subject: mail.subject, authenticated: identity.authenticated };
          return outcome(r.recipient, { outcome: result, userId: r.userId, ...(result === 'quarantined' ? { reason: 'newsletter-cap', held } : {}) });
        }),
      );
    } catch (error) {
      if (!(error instanceof MailRejected)) throw error;
      logger.warn('Inbound mail rejected', { messageId, reason: error.reason, detail: error.message });
      filed = admitted.map((r) => outcome(r.recipient, { outcome: 'rejected', reason: error.reason, userId: r.userId }));
    }
    return [...unknown, ...limited, ...filed];
  }

  /**
   * A record that is not SES's shape fails the invocation once the others are done (they are
   * idempotent), so it is retried and then lands in the function's failure destination, not lost.
   */
  return async (event: SESEvent): Promise<void> => {
    let malformed = 0;
    for (const record of event.Records) {
      const parsed = SesRecord.safeParse(record);
      if (!parsed.success) {
        logger.error('Malformed SES record', { issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`) });
        malformed++;
        continue;
      }
      const { mail, receipt } = parsed.data.ses;
      const outcomes = await receive(mail.messageId, receipt, mail.commonHeaders ?? {});
      await recordOutcomes(outcomes);
      logger.info('Inbound mail', { messageId: mail.messageId, outcomes: outcomes.map((o) => `${o.outcome}${o.reason ? `:${o.reason}` : ''}`) });
    }
    if (malformed > 0) throw new Error(`${malformed} of ${event.Records.length} SES records were malformed`);
  };
}
