import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import type { ResultSetHeader } from 'mysql2';
import { hashPassword } from '../../shared/sessions/password';
import type { Role } from '../../shared/sessions/users';

export interface TestUser {
  id: number;
  email: string;
  password: string;
  role: Role;
}

const PASSWORD = 'correct horse battery staple';
// Hashing is slow on purpose; one hash serves every test user.
const passwordHash = hashPassword(PASSWORD);

/** Inserts users with unique emails straight into MySQL, as the twin's seed does. */
export async function createUsers(count: number, role: Role = 'user'): Promise<TestUser[]> {
  const conn = await createConnection({ uri: process.env.DATABASE_URL! });
  try {
    const hash = await passwordHash;
    const tag = randomBytes(4).toString('hex');
    const emails = Array.from({ length: count }, (_, i) => `user-${tag}-${i}@surge.test`);
    const [result] = await conn.query<ResultSetHeader>('INSERT INTO users (email, password_hash, role) VALUES ?', [
      emails.map((email) => [email, hash, role]),
    ]);
    return emails.map((email, i) => ({ id: result.insertId + i, email, password: PASSWORD, role }));
  } finally {
    await conn.end();
  }
}

export async function createUser(role: Role = 'user'): Promise<TestUser> {
  return (await createUsers(1, role))[0]!;
}
