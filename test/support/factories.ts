import { randomBytes } from 'node:crypto';
import { insertUsers, type CreatedUser } from '../../infra/twin/seed';
import type { Role } from '../../shared/sessions/account-rules';

export type TestUser = CreatedUser;

/** Users with unique emails, inserted straight into MySQL. */
export function createUsers(count: number, role: Role = 'user'): Promise<TestUser[]> {
  const tag = randomBytes(4).toString('hex');
  const emails = Array.from({ length: count }, (_, i) => `user-${tag}-${i}@surge.test`);
  return insertUsers(process.env.DATABASE_URL!, emails, 'correct horse battery staple', role);
}

export async function createUser(role: Role = 'user'): Promise<TestUser> {
  return (await createUsers(1, role))[0]!;
}
