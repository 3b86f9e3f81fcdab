import type { RowDataPacket } from 'mysql2';
import { db } from '../clients/mysql';
import { normaliseEmail } from './account-rules';

export type Role = 'user' | 'admin';

export interface UserRecord {
  id: number;
  email: string;
  role: Role;
  passwordHash: string;
}

interface UserRow extends RowDataPacket {
  id: number;
  email: string;
  role: Role;
  password_hash: string;
}

export async function findUserByEmail(email: string): Promise<UserRecord | undefined> {
  const [rows] = await db().query<UserRow[]>(
    'SELECT id, email, role, password_hash FROM users WHERE email = ? LIMIT 1',
    [normaliseEmail(email)],
  );
  const row = rows[0];
  return row && { id: Number(row.id), email: row.email, role: row.role, passwordHash: row.password_hash };
}
