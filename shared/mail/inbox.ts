import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { db } from '../platform/clients/mysql';
import { NotFoundError } from '../platform/errors';
import { LIMITS } from '../limits/limits';
import { admitNewNewsletter } from '../limits/rate';
import { feedsChanged } from './feed-access';
import type { SafeMail } from './isolated-parse';
import * as z from '../platform/zod';

/** quarantined: the newsletter would be new to a reader who has had their day's share of new ones. */
export type FilingOutcome = 'filed' | 'duplicate' | 'muted' | 'quarantined';

/** Attachments listed per issue; their total is kept beside the list. */
const LISTED_ATTACHMENTS = 50;

export interface IssueToFile {
  userId: number;
  newsletterId: number;
  /** The name this mail gives its newsletter, shown to this reader. */
  newsletterName: string;
  sesMessageId: string;
  mail: SafeMail;
  /** A mail the reader released from quarantine is filed past the cap: they asked for it. */
  released?: boolean;
}

/** The sender as a reader sees it on an issue or in quarantine. */
export const senderLine = (from: SafeMail['from']) => (from.name ? `${from.name} <${from.address}>` : from.address).slice(0, 400);

/**
 * The reader's subscription to a newsletter or, without one, the newsletters new to them within
 * the cap's window (`recent`). One plain read, taking no locks: its second half finds nothing when
 * the first finds the subscription.
 */
async function subscriptionOf(userId: number, newsletterId: number): Promise<{ subscription?: { muted: boolean; name: string }; recent: number[] }> {
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT newsletter_id, muted, name FROM subscriptions WHERE user_id = ? AND newsletter_id = ?
     UNION ALL
     SELECT newsletter_id, muted, name FROM subscriptions
      WHERE user_id = ? AND subscribed_at > CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND
        AND NOT EXISTS (SELECT 1 FROM subscriptions WHERE user_id = ? AND newsletter_id = ?)`,
    [userId, newsletterId, userId, LIMITS.newNewslettersPerReader.periodMs / 1000, userId, newsletterId],
  );
  const own = rows.find((r) => Number(r.newsletter_id) === newsletterId);
  return own ? { subscription: { muted: Boolean(own.muted), name: own.name as string }, recent: [] } : { recent: rows.map((r) => Number(r.newsletter_id)) };
}

/**
 * Files one issue for one reader. A newsletter new to the reader subscribes them unless that
 * would pass their cap of new newsletters (shared/limits, admitNewNewsletter). Every statement is
 * idempotent on its own (subscription upsert, issue keyed on SES message and reader), so a retry
 * after a failure part-way completes the work and a redelivered event changes nothing.
 */
export async function fileIssue({ userId, newsletterId, newsletterName, sesMessageId, mail, released = false }: IssueToFile): Promise<FilingOutcome> {
  const { subscription, recent } = await subscriptionOf(userId, newsletterId);
  if (subscription) {
    // Each reader sees the newsletter under the name the latest mail they got gave it.
    if (subscription.name !== newsletterName) {
      await db().query('UPDATE subscriptions SET name = ? WHERE user_id = ? AND newsletter_id = ?', [newsletterName, userId, newsletterId]);
      // A muted newsletter's own feed still shows its name.
      if (subscription.muted) await feedsChanged(userId);
    }
    if (subscription.muted) return 'muted';
  } else {
    if (!(await admitNewNewsletter(userId, newsletterId, recent, released))) return 'quarantined';
    // Another mail of this newsletter may have subscribed the reader since the read: it keeps the row.
    await db().query('INSERT INTO subscriptions (user_id, newsletter_id, name) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE name = VALUES(name)', [
      userId,
      newsletterId,
      newsletterName,
    ]);
  }
  const sender = senderLine(mail.from);
  const [result] = await db().query<ResultSetHeader>(
    `INSERT INTO issues (user_id, newsletter_id, ses_message_id, subject, sender, sent_at, html, text, list_unsubscribe, attachments, attachment_count)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE id = id`,
    [
      userId,
      newsletterId,
      sesMessageId,
      mail.subject,
      sender,
      mail.sentAt ?? null,
      mail.html ?? null,
      mail.text ?? null,
      JSON.stringify(mail.listUnsubscribe),
      JSON.stringify(mail.attachments.slice(0, LISTED_ATTACHMENTS).map((a) => ({ ...a, filename: a.filename.slice(0, 100) }))),
      mail.attachments.length,
    ],
  );
  // A duplicate bumps too: it may be the retry of a filing whose bump failed.
  await feedsChanged(userId);
  // mysql2 counts a found row as affected, so a redelivery is told apart by getting no new id.
  return result.insertId !== 0 ? 'filed' : 'duplicate';
}

export interface NewsletterSummary {
  id: number;
  name: string;
  identity: string;
  /** False: SES did not authenticate the sender, so its From and name may be anyone's. */
  authenticated: boolean;
  muted: boolean;
  issues: number;
  unread: number;
  lastIssueAt: string | null;
  /**
   * The https and mailto links of the List-Unsubscribe header of the reader's latest issue that
   * had one (senders often make them per mail). The reader's client follows them: Surge's
   * functions have no way out to the internet.
   */
  listUnsubscribe: string[];
}

/**
 * A page of the reader's newsletters, newest first, and the cursor of the next page (null after
 * the last). Paged by newsletter id, which never changes, so a page never repeats or skips one as
 * mail arrives; counts are taken for the page's newsletters only.
 */
export async function listNewsletters(
  userId: number,
  page: { after?: number; limit: number },
): Promise<{ newsletters: NewsletterSummary[]; next: string | null }> {
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT n.id, s.name, n.identity, n.authenticated, s.muted, COUNT(i.id) AS issues, COALESCE(SUM(i.id IS NOT NULL AND i.read_at IS NULL), 0) AS unread, MAX(i.filed_at) AS last_issue_at,
            (SELECT u.list_unsubscribe FROM issues u
              WHERE u.user_id = ? AND u.newsletter_id = s.newsletter_id AND u.list_unsubscribe <> '[]'
              ORDER BY u.id DESC LIMIT 1) AS list_unsubscribe
       FROM (SELECT newsletter_id, name, muted FROM subscriptions
              WHERE user_id = ? ${page.after !== undefined ? 'AND newsletter_id < ?' : ''}
              ORDER BY newsletter_id DESC LIMIT ?) s
       JOIN newsletters n ON n.id = s.newsletter_id
       LEFT JOIN issues i ON i.user_id = ? AND i.newsletter_id = s.newsletter_id
      GROUP BY n.id, s.name, n.identity, n.authenticated, s.muted
      ORDER BY n.id DESC`,
    [userId, userId, ...(page.after !== undefined ? [page.after] : []), page.limit + 1, userId],
  );
  const more = rows.length > page.limit;
  const newsletters = rows.slice(0, page.limit).map((r) => ({
    id: Number(r.id),
    name: r.name,
    identity: r.identity,
    authenticated: Boolean(r.authenticated),
    muted: Boolean(r.muted),
    issues: Number(r.issues),
    unread: Number(r.unread),
    lastIssueAt: r.last_issue_at ? new Date(r.last_issue_at).toISOString() : null,
    listUnsubscribe: JSON.parse(r.list_unsubscribe ?? '[]') as string[],
  }));
  return { newsletters, next: more ? String(newsletters.at(-1)!.id) : null };
}

async function assertSubscribed(userId: number, newsletterId: number): Promise<void> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT 1 FROM subscriptions WHERE user_id = ? AND newsletter_id = ?', [userId, newsletterId]);
  if (!rows[0]) throw new NotFoundError('No such newsletter');
}

const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null);

/** An issue as the inbox lists it; the answers of the inbox's routes are made of it. */
export const IssueSummary = z.strictObject({
  id: z.int(),
  newsletterId: z.int(),
  subject: z.string(),
  sender: z.string(),
  sentAt: z.nullable(z.iso.datetime()),
  filedAt: z.nullable(z.iso.datetime()),
  read: z.boolean(),
});

/** An issue in full, as the reader opens it. */
export const Issue = z.extend(IssueSummary, {
  html: z.nullable(z.string()),
  text: z.nullable(z.string()),
  listUnsubscribe: z.array(z.string()),
  attachments: z.array(z.unknown()),
  attachmentCount: z.int(),
});

function issueSummary(r: RowDataPacket): z.infer<typeof IssueSummary> {
  return {
    id: Number(r.id),
    newsletterId: Number(r.newsletter_id),
    subject: r.subject as string,
    sender: r.sender as string,
    sentAt: iso(r.sent_at),
    filedAt: iso(r.filed_at),
    read: r.read_at !== null,
  };
}

export async function listInbox(userId: number, query: { newsletter?: number; page: number; size: number }) {
  if (query.newsletter !== undefined) await assertSubscribed(userId, query.newsletter);
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT id, newsletter_id, subject, sender, sent_at, filed_at, read_at FROM issues
      WHERE user_id = ? ${query.newsletter !== undefined ? 'AND newsletter_id = ?' : ''}
      ORDER BY id DESC LIMIT ? OFFSET ?`,
    [userId, ...(query.newsletter !== undefined ? [query.newsletter] : []), query.size, (query.page - 1) * query.size],
  );
  return { page: query.page, size: query.size, issues: rows.map(issueSummary) };
}

/** One of the reader's issues in full, marked read; anyone else's is not found. */
export async function readIssue(userId: number, issueId: number) {
  await db().query('UPDATE issues SET read_at = CURRENT_TIMESTAMP(3) WHERE id = ? AND user_id = ? AND read_at IS NULL', [issueId, userId]);
  const [[row]] = await db().query<RowDataPacket[]>(
    'SELECT id, newsletter_id, subject, sender, sent_at, filed_at, read_at, html, text, list_unsubscribe, attachments, attachment_count FROM issues WHERE id = ? AND user_id = ?',
    [issueId, userId],
  );
  if (!row) throw new NotFoundError('No such issue');
  return {
    ...issueSummary(row),
    html: row.html as string | null,
    text: row.text as string | null,
    listUnsubscribe: JSON.parse(row.list_unsubscribe ?? '[]') as string[],
    attachments: JSON.parse(row.attachments as string) as unknown[],
    attachmentCount: Number(row.attachment_count),
  };
}

/** Later mail from a muted newsletter is not filed for this reader; what was filed stays. */
export async function setMuted(userId: number, newsletterId: number, muted: boolean): Promise<void> {
  const [result] = await db().query<ResultSetHeader>('UPDATE subscriptions SET muted = ? WHERE user_id = ? AND newsletter_id = ?', [
    muted,
    userId,
    newsletterId,
  ]);
  if (result.affectedRows === 0) throw new NotFoundError('No such newsletter');
  // The all-newsletters feed leaves a muted newsletter out, and its own feed says it is muted.
  await feedsChanged(userId);
}
