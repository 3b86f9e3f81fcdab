import { cookieValue, createSession } from '../../shared/sessions/store';
import type { Role } from '../../shared/sessions/account-rules';
import { createUsers, type TestUser } from './factories';

export interface SignedInUser extends TestUser {
  cookie: string;
}

/** Users signed in straight through the session store (sign-in over HTTP is tested on its own). */
export async function signedInUsers(count: number, role: Role = 'user'): Promise<SignedInUser[]> {
  const users = await createUsers(count, role);
  return Promise.all(users.map(async (u) => ({ ...u, cookie: `sid=${cookieValue(await createSession(u))}` })));
}
