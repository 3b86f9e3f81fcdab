import { db } from '../clients/mysql';

export type Outcome = 'filed' | 'duplicate' | 'muted' | 'quarantined' | 'dropped' | 'rejected';

export interface OutcomeRecord {
  sesMessageId: string;
  recipient: string;
  outcome: Outcome;
  reason?: string;
  userId?: number;
  rawKey: string;
}

/** Records what became of a message for each recipient, in one statement; the first record of a pair stands. */
export async function recordOutcomes(records: OutcomeRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db().query('INSERT INTO mail_outcomes (ses_message_id, recipient, outcome, reason, user_id, raw_key) VALUES ? ON DUPLICATE KEY UPDATE ses_message_id = ses_message_id', [
    records.map((r) => [r.sesMessageId, r.recipient.slice(0, 320), r.outcome, (r.reason ?? '').slice(0, 200), r.userId ?? null, r.rawKey]),
  ]);
}
