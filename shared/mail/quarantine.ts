import type { RowDataPacket } from 'mysql2';
import { db } from '../platform/clients/mysql';
import { AppError, NotFoundError } from '../platform/errors';
import { logger } from '../platform/logger';
import { identify } from './identity';
import { fileIssue, type FilingOutcome } from './inbox';
import { MailParserPool } from './isolated-parse';
import { mailLimits } from './limits';
import type { NewsletterResolver } from './newsletters';
import { readRawMail } from './raw-store';
import { MailRejected } from './rejection';

export interface QuarantinedMail {
  id: number;
  reason: string;
  sender: string;
  subject: string;
  /** False: SES did not authenticate the sender, so the sender shown may be anyone's. */
  authenticated: boolean;
  quarantinedAt: string;
}

/**
 * A page of the reader's quarantined mail, newest first, and the cursor of the next page (null
 * after the last): only mail not yet released whose raw message is still kept, since only that
 * can be released, which is mail younger than the raw messages' retention.
 */
export async function listQuarantine(
  userId: number,
  retentionDays: number,
  page: { after?: number; limit: number },
): Promise<{ mail: QuarantinedMail[]; next: string | null }> {
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT id, reason, sender, subject, authenticated, quarantined_at FROM quarantined_mail
      WHERE user_id = ? AND released_at IS NULL AND quarantined_at > CURRENT_TIMESTAMP(3) - INTERVAL ? DAY ${page.after !== undefined ? 'AND id < ?' : ''}
      ORDER BY id DESC LIMIT ?`,
    [userId, retentionDays, ...(page.after !== undefined ? [page.after] : []), page.limit + 1],
  );
  const mail = rows.slice(0, page.limit).map((r) => ({
    id: Number(r.id),
    reason: r.reason as string,
    sender: r.sender as string,
    subject: r.subject as string,
    authenticated: Boolean(r.authenticated),
    quarantinedAt: new Date(r.quarantined_at).toISOString(),
  }));
  return { mail, next: rows.length > page.limit ? String(mail.at(-1)!.id) : null };
}

export type ReleaseOutcome = Exclude<FilingOutcome, 'quarantined'> | 'rejected';

export interface MailReleaserOptions {
  bucket: string;
  /** Days raw messages are kept: an older quarantined mail has none left to release. */
  retentionDays: number;
  resolveNewsletter: NewsletterResolver;
}

/**
 * Files a quarantined mail for the reader who asked, from its raw message, as receipt would have:
 * its newsletter is its sender's only if SES authenticated the sender, it passes the reader's cap
 * (they chose it) but not their mutes. A mail whose virus scan did not pass stays quarantined.
 * Releasing again changes nothing; a message the parser refuses is answered as rejected.
 */
export function mailReleaser({ bucket, retentionDays, resolveNewsletter }: MailReleaserOptions) {
  const parser = new MailParserPool(1);

  return async (userId: number, id: number): Promise<{ id: number; outcome: ReleaseOutcome; reason?: string }> => {
    const [[held]] = await db().query<RowDataPacket[]>(
      `SELECT ses_message_id, raw_key, reason, authenticated FROM quarantined_mail
        WHERE id = ? AND user_id = ? AND quarantined_at > CURRENT_TIMESTAMP(3) - INTERVAL ? DAY`,
      [id, userId, retentionDays],
    );
    if (!held) throw new NotFoundError('No such quarantined mail');
    if (String(held.reason).startsWith('virus')) throw new AppError('CONFLICT', 'Mail whose virus scan did not pass cannot be released');

    let outcome: ReleaseOutcome;
    try {
      const mail = await parser.parse(await readRawMail(bucket, held.raw_key, mailLimits.maxMessageBytes));
      const identity = identify(mail, { authenticated: Boolean(held.authenticated) });
      const newsletterId = await resolveNewsletter(identity);
      outcome = (await fileIssue({
        userId,
        newsletterId,
        newsletterName: identity.name,
        sesMessageId: held.ses_message_id,
        mail,
        released: true,
      })) as ReleaseOutcome;
    } catch (error) {
      if (!(error instanceof MailRejected)) throw error;
      logger.warn('Released mail rejected', { id, reason: error.reason, detail: error.message });
      return { id, outcome: 'rejected', reason: error.reason };
    }
    if (outcome !== 'muted') await db().query('UPDATE quarantined_mail SET released_at = CURRENT_TIMESTAMP(3) WHERE id = ? AND released_at IS NULL', [id]);
    return { id, outcome };
  };
}
