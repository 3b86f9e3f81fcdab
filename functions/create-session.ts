import * as z from '../shared/platform/zod';
import { AppError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { admitSignIn, signInSucceeded } from '../shared/limits/rate';
import { json } from '../shared/platform/http/response';
import { EmailAddress } from '../shared/sessions/account-rules';
import { verifyPassword } from '../shared/sessions/password';
import { SESSION_COOKIE, signIn } from '../shared/sessions/store';
import { findUserByEmail } from '../shared/sessions/users';

const Credentials = z.object({
  email: EmailAddress,
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
});

/**
 * Admitted first (a lockout or the source's rate answers 429 before any lookup or scrypt, the
 * same whether or not the address has an account), then checked; each attempt counts towards
 * this address's lockout from this source only (so nobody elsewhere can lock its owner out),
 * until one succeeds.
 */
export const handler = api({ access: 'public', body: Credentials }).handler(async (event) => {
  const { email, password } = event.input.body;
  const source = clientAddress(event);
  await admitSignIn(email, source);
  const user = await findUserByEmail(email);
  if (!(await verifyPassword(password, user?.passwordHash)) || !user) {
    throw new AppError('INVALID_CREDENTIALS', 'Email or password is wrong');
  }
  await signInSucceeded(email, source);
  // A store that refused the session (full, or away) started none: the error handler's 503 makes signing in again safe.
  const cookie = await signIn(user, event.cookieMap[SESSION_COOKIE]);
  return json(201, { user: { id: user.id, email: user.email, role: user.role } }, { cookies: [cookie] });
});
