import { hash, randomBytes } from 'node:crypto';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { db } from '../platform/clients/mysql';
import { inTransaction } from '../platform/db/transaction';

/** 256 random bits in base64url: a path segment as it is, and no one guesses it. */
export const newFeedToken = () => randomBytes(32).toString('base64url');

/** What a feed token looks like; anything else is refused before a lookup. */
export const FEED_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * A token's SHA-256, by which it is looked up in MySQL and named in Redis: an index or key compared
 * byte by byte compares hashes, so how long a wrong token's miss takes says nothing about the right one.
 * One-shot (crypto.hash): every poll hashes its token, and a Hash object per poll cost twice as much.
 */
export const feedTokenHash = (token: string) => hash('sha256', token, 'base64url');

/** The reader's feed token, created on first use. */
export async function feedTokenFor(userId: number): Promise<string> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT token FROM feed_tokens WHERE user_id = ?', [userId]);
  if (rows[0]) return rows[0].token as string;
  const token = newFeedToken();
  // Two first uses at once: the first row stays, and both read it.
  await db().query('INSERT INTO feed_tokens (user_id, token, token_hash) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE user_id = user_id', [
    userId,
    token,
    feedTokenHash(token),
  ]);
  return feedTokenFor(userId);
}

/** The hash of the reader's current token, if they have one: what their feeds' Redis keys are named by. */
export async function feedTokenHashOf(userId: number): Promise<string | undefined> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT token_hash FROM feed_tokens WHERE user_id = ?', [userId]);
  return rows[0]?.token_hash as string | undefined;
}

/**
 * Gives the reader a new token; returns it. The token it replaced is kept, in the same transaction,
 * as one to revoke (feed_token_revocations) until Redis has forgotten it: a rotation whose Redis
 * step failed leaves it there for the retry or the sweep. The row lock
 * orders two rotations at once: each replaces the token the other left.
 */
export async function replaceFeedToken(userId: number): Promise<string> {
  const token = newFeedToken();
  const hash = feedTokenHash(token);
  for (;;) {
    const replaced = await inTransaction(db(), async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>('SELECT token_hash FROM feed_tokens WHERE user_id = ? FOR UPDATE', [userId]);
      const old = rows[0]?.token_hash as string | undefined;
      if (!old) {
        const [result] = await conn.query<ResultSetHeader>('INSERT IGNORE INTO feed_tokens (user_id, token, token_hash) VALUES (?, ?, ?)', [
          userId,
          token,
          hash,
        ]);
        return result.affectedRows === 1;
      }
      await conn.query('UPDATE feed_tokens SET token = ?, token_hash = ?, created_at = CURRENT_TIMESTAMP(3) WHERE user_id = ?', [token, hash, userId]);
      await conn.query('INSERT IGNORE INTO feed_token_revocations (token_hash, user_id) VALUES (?, ?)', [old, userId]);
      return true;
    });
    // A first use that lost the race to another's insert: replace the token it made.
    if (replaced) return token;
  }
}

/** The replaced tokens still to revoke in Redis, by hash: one reader's, or (the sweep) anyone's, oldest first. */
export async function tokensToRevoke(userId?: number, limit = 1_000): Promise<string[]> {
  const [rows] =
    userId === undefined
      ? await db().query<RowDataPacket[]>('SELECT token_hash FROM feed_token_revocations ORDER BY replaced_at LIMIT ?', [limit])
      : await db().query<RowDataPacket[]>('SELECT token_hash FROM feed_token_revocations WHERE user_id = ? LIMIT ?', [userId, limit]);
  return rows.map((row) => row.token_hash as string);
}

/** Forgets a replaced token once Redis revoked it. */
export async function tokenRevoked(hash: string): Promise<void> {
  await db().query('DELETE FROM feed_token_revocations WHERE token_hash = ?', [hash]);
}

/** The reader whose token has this hash, if any: one lookup on the unique index of hashes. */
export async function readerOfFeedTokenHash(hash: string): Promise<number | undefined> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT user_id FROM feed_tokens WHERE token_hash = ?', [hash]);
  return rows[0] ? Number(rows[0].user_id) : undefined;
}
