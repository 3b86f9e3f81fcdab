import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { db } from '../platform/clients/mysql';
import { newInboxToken } from './inbox-token';

/** The user's token, created on first use. */
export async function inboxTokenFor(userId: number): Promise<string> {
  const [rows] = await db().query<RowDataPacket[]>('SELECT token FROM inbox_addresses WHERE user_id = ?', [userId]);
  if (rows[0]) return rows[0].token as string;
  await db().query('INSERT INTO inbox_addresses (user_id, token) VALUES (?, ?) ON DUPLICATE KEY UPDATE user_id = user_id', [userId, newInboxToken()]);
  return inboxTokenFor(userId);
}

/** Gives the user a new token; mail to the old address is dropped from now on. */
export async function rotateInboxToken(userId: number): Promise<string> {
  const token = newInboxToken();
  await db().query<ResultSetHeader>(
    'INSERT INTO inbox_addresses (user_id, token) VALUES (?, ?) ON DUPLICATE KEY UPDATE token = VALUES(token), created_at = CURRENT_TIMESTAMP(3)',
    [userId, token],
  );
  return token;
}

/** The users behind these tokens, in one query; tokens nobody holds are absent. */
export async function usersByInboxToken(tokens: string[]): Promise<Map<string, number>> {
  if (tokens.length === 0) return new Map();
  const [rows] = await db().query<RowDataPacket[]>('SELECT token, user_id FROM inbox_addresses WHERE token IN (?)', [tokens]);
  return new Map(rows.map((r) => [r.token as string, Number(r.user_id)]));
}
