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

/** Ids are kept by the instance as resolved (below), not as the cache's near copies, which ask Redis for a version each read. */
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
 * Newsletter ids this instance has resolved, by identity key. An identity's id never changes, and
 * an instance files many issues of one newsletter (a sender mails each reader apart, and SES
 * invokes the function once a message), so each after the first asks Redis nothing. Bounded by
 * count (a key and an id, ~100 bytes each); past the bound the oldest go first.
 */
const RESOLVED_IDS = 10_000;
const resolvedIds = new Map<string, number>();

/**
 * Finds or creates the newsletter through the lock-guarded cache: however many mails of a new
 * newsletter arrive at once, across however many instances, one caller runs the lookup and the
 * insert while the others wait to be woken with its id.
 */
export const findOrCreateNewsletter: NewsletterResolver = async (identity) => {
  const resolved = resolvedIds.get(identity.key);
  if (resolved !== undefined) return resolved;
  const id = Number(await cache().getOrFill(newsletterCacheKey(identity), FILL, async () => String(await lookUpOrInsertNewsletter(identity))));
  if (resolvedIds.size >= RESOLVED_IDS) resolvedIds.delete(resolvedIds.keys().next().value!);
  resolvedIds.set(identity.key, id);
  return id;
};
