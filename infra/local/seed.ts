import { createConnection } from 'mysql2/promise';
import { hashPassword } from '../../shared/sessions/password';

export const demoAccounts = [
  { email: 'demo@surge.test', password: 'surge-demo-password', role: 'user' },
  { email: 'admin@surge.test', password: 'surge-admin-password', role: 'admin' },
] as const;

/** Demo data for the twin. Passwords are reset on every start so the printed credentials always work. */
export async function seed(databaseUrl: string): Promise<void> {
  const conn = await createConnection({ uri: databaseUrl });
  try {
    for (const account of demoAccounts) {
      await conn.query(
        `INSERT INTO users (email, password_hash, role) VALUES (?, ?, ?)
         ON DUPLICATE KEY UPDATE password_hash = VALUES(password_hash), role = VALUES(role)`,
        [account.email, await hashPassword(account.password), account.role],
      );
    }
  } finally {
    await conn.end();
  }
}
