import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { cache } from '../cache/cache';
import type { CacheKey, FillOptions } from '../cache/locked-fill';
import { db } from '../platform/clients/mysql';
import type { NewsletterIdentity } from './identity';

/**
 * Each identity in a hash slot of its own, so the stampede of one newsletter never lands on a slot
 * another newsletter's mail needs. An identity's id never changes: the version is never bumped.
 */
export function newsletterCacheKey(identity: NewsletterIdentity): CacheKey {
  const tag = `{newsletter:${identity.key}}`;
  return { versionKey: `${tag}:version`, prefix: `${tag}:id:`, suffix: 'v' };
}

/** A mail function reads each newsletter's id a few times at most: no near copies, no version key. */
const FILL: FillOptions = {
  ttlSeconds: 7 * 24 * 3600,
  jitter: 0.1,
  staleSeconds: 0,
  leaseMs: 5_000,
  maxWaitMs: 15_000,
  earlyRefreshBeta: 0,
  nearCopies: false,
};

/** One lookup and, for a newsletter not yet known, one insert; the unique key settles any race past the lock. */
export async function lookUpOrInsertNewsletter(identity: NewsletterIdentity): Promise<number> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT id, authenticated FROM newsletters WHERE identity_key = ?', [identity.key]);
  if (rows[0]) {
    // A row from before senders were checked shares the authenticated key: authenticated mail marks it.
    if (identity.authenticated && !rows[0].authenticated) await db().query('UPDATE newsletters SET authenticated = TRUE WHERE id = ?', [rows[0].id]);
    return Number(rows[0].id);
  }
  const [result] = await db().query<ResultSetHeader>(
    'INSERT INTO newsletters (identity_key, identity, kind, name, authenticated) VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)',
    [identity.key, identity.value, identity.kind, identity.name, identity.authenticated],
  );
  return result.insertId;
}

export type NewsletterResolver = (identity: NewsletterIdentity) => Promise<number>;

/**
 * Finds or creates the newsletter through the lock-guarded cache: however many mails of a new
 * newsletter arrive at once, across however many instances, one caller runs the lookup and the
 * insert while the others wait to be woken with its id.
 */
export const findOrCreateNewsletter: NewsletterResolver = async (identity) =>
  Number(await cache().getOrFill(newsletterCacheKey(identity), FILL, async () => String(await lookUpOrInsertNewsletter(identity))));
