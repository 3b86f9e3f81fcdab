import { db } from '../platform/clients/mysql';
import { count } from '../platform/metrics';

export type Outcome = 'filed' | 'duplicate' | 'muted' | 'quarantined' | 'dropped' | 'rejected';

/** What a reader is shown of a quarantined mail, and whether releasing it may file it as its sender's. */
export interface HeldMail {
  sender: string;
  subject: string;
  authenticated: boolean;
}

export interface OutcomeRecord {
  sesMessageId: string;
  recipient: string;
  outcome: Outcome;
  reason?: string;
  userId?: number;
  rawKey: string;
  /** With a quarantined outcome: the mail goes on its reader's quarantine list. */
  held?: HeldMail;
}

/**
 * Records what became of a message for each recipient, in one statement, and puts quarantined
 * mail on its reader's list in one more; the first record of a pair stands.
 */
export async function recordOutcomes(records: OutcomeRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db().query(
    'INSERT INTO mail_outcomes (ses_message_id, recipient, outcome, reason, user_id, raw_key) VALUES ? ON DUPLICATE KEY UPDATE ses_message_id = ses_message_id',
    [records.map((r) => [r.sesMessageId, r.recipient.slice(0, 320), r.outcome, (r.reason ?? '').slice(0, 200), r.userId ?? null, r.rawKey])],
  );
  for (const record of records) count(`mail.${record.outcome}`);
  const held = records.filter((r) => r.outcome === 'quarantined' && r.userId !== undefined && r.held);
  if (held.length === 0) return;
  await db().query(
    'INSERT INTO quarantined_mail (user_id, ses_message_id, raw_key, reason, sender, subject, authenticated) VALUES ? ON DUPLICATE KEY UPDATE id = id',
    [
      held.map((r) => [
        r.userId,
        r.sesMessageId,
        r.rawKey,
        (r.reason ?? '').slice(0, 200),
        r.held!.sender.slice(0, 400),
        r.held!.subject.slice(0, 500),
        r.held!.authenticated,
      ]),
    ],
  );
}
