import { randomBytes } from 'node:crypto';
import type { RowDataPacket } from 'mysql2';
import { db } from '../platform/clients/mysql';
import { randomId } from '../platform/random-id';
import { hashPassword } from './password';
import { cookieValue, createSession, SESSION_COOKIE } from './store';

/** At most this many buyers per request: well inside an API function's 10 s and API Gateway's 6 MB answer. */
export const MAX_BUYERS_PER_REQUEST = 5_000;

/** Rows per INSERT: one statement per thousand buyers. */
const ROWS_PER_INSERT = 1_000;

/**
 * Sessions per write. Each command waits at most the client's command timeout (1 s) from when it
 * is sent: thousands sent at once kept the last ones waiting past it on a busy two-core machine
 * (the fuzz run found a 503 for 4,991 buyers), so they go out a few hundred at a time.
 */
const SESSIONS_PER_WRITE = 250;

/** Where load-test buyers' addresses live: a reserved top-level domain (RFC 2606), so none is anyone's mailbox. */
const BUYER_DOMAIN = 'load-test.surge.invalid';

export interface LoadTestBuyer {
  userId: number;
  /** The Cookie header that signs the buyer in, e.g. `sid=42.<session id>`. */
  cookie: string;
}

/**
 * Creates `count` users (role user) and a session for each, for a load test that should measure
 * the sale rather than sign-in's scrypt. They share one password hash of a random password that
 * is forgotten at once, so none can sign in: only the sessions returned here reach them. The rows
 * go in with multi-row INSERTs and are read back by address (an auto-increment range is not
 * promised consecutive on Aurora MySQL); the sessions are written a few hundred at a time, each
 * batch in one write of the shared connection, each buyer's keys in the buyer's own slot.
 */
export async function createLoadTestBuyers(count: number): Promise<LoadTestBuyer[]> {
  const run = randomId(6)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, 'x');
  const passwordHash = await hashPassword(randomBytes(24).toString('base64url'));
  const emails = Array.from({ length: count }, (_, i) => `buyer-${run}-${i}@${BUYER_DOMAIN}`);
  const users: { id: number; email: string }[] = [];
  for (let i = 0; i < emails.length; i += ROWS_PER_INSERT) {
    const chunk = emails.slice(i, i + ROWS_PER_INSERT);
    await db().query('INSERT INTO users (email, password_hash, role) VALUES ?', [chunk.map((email) => [email, passwordHash, 'user'])]);
    const [rows] = await db().query<RowDataPacket[]>('SELECT id, email FROM users WHERE email IN (?)', [chunk]);
    users.push(...rows.map((r) => ({ id: Number(r.id), email: String(r.email) })));
  }
  const handles = [];
  for (let i = 0; i < users.length; i += SESSIONS_PER_WRITE) {
    handles.push(...(await Promise.all(users.slice(i, i + SESSIONS_PER_WRITE).map((u) => createSession({ id: u.id, role: 'user', email: u.email })))));
  }
  return handles.map((handle) => ({ userId: handle.userId, cookie: `${SESSION_COOKIE}=${cookieValue(handle)}` }));
}
