import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { db } from '../platform/clients/mysql';
import { AppError } from '../platform/errors';
import './codes';
import { EmailAddress, normaliseEmail, type Role, type User } from './account-rules';
import { hashPassword } from './password';

export interface UserRecord extends User {
  passwordHash: string;
}

interface UserRow extends RowDataPacket {
  id: number;
  email: string;
  role: Role;
  password_hash: string;
}

/** MySQL's ER_DUP_ENTRY; on users only the unique key on email can raise it. */
const DUPLICATE_ENTRY = 1062;

export async function findUserByEmail(email: string): Promise<UserRecord | undefined> {
  const [rows] = await db().query<UserRow[]>('SELECT id, email, role, password_hash FROM users WHERE email = ? LIMIT 1', [normaliseEmail(email)]);
  const row = rows[0];
  return row && { id: Number(row.id), email: row.email, role: row.role, passwordHash: row.password_hash };
}

/**
 * Inserts a user with the password hashed, or answers undefined when the address is taken: the
 * unique key decides, so of any number of concurrent inserts of one address exactly one succeeds.
 */
async function insertUser(email: string, password: string, role: Role): Promise<User | undefined> {
  const address = normaliseEmail(email);
  const passwordHash = await hashPassword(password);
  try {
    const [result] = await db().query<ResultSetHeader>('INSERT INTO users (email, password_hash, role) VALUES (?, ?, ?)', [address, passwordHash, role]);
    return { id: Number(result.insertId), email: address, role };
  } catch (error) {
    if ((error as { errno?: number }).errno === DUPLICATE_ENTRY) return undefined;
    throw error;
  }
}

/** A new account with the user role, for a password the caller has held to the policy (passwordProblem). */
export async function signUp(email: string, password: string): Promise<User> {
  const user = await insertUser(email, password, 'user');
  if (!user) throw new AppError('EMAIL_TAKEN', 'An account with this email address exists already');
  return user;
}

/**
 * The first admin, as the deploy trigger keeps it on every deploy: created with the given password
 * if its address is not taken. An existing admin is left as it is, password included, so one
 * changed since is never reset. An address held by an account that is not an admin fails the
 * trigger instead of promoting it: anyone may have signed up with it, and an admin demoted on
 * purpose stays demoted.
 */
export async function ensureFirstAdmin(credentials: { email: string; password: string }): Promise<'created' | 'exists'> {
  const email = EmailAddress.safeParse(credentials.email);
  if (!email.success) throw new Error("The first admin's address is not an email address");
  if (await insertUser(email.data, credentials.password, 'admin')) return 'created';
  if ((await findUserByEmail(email.data))?.role !== 'admin') {
    throw new Error(
      `The first admin's address ${email.data} belongs to an account that is not an admin; deploy with another adminEmail, or make it an admin by hand`,
    );
  }
  return 'exists';
}
