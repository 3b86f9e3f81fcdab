import { admitSignIn, signInSucceeded, takeSignUp } from '../limits/rate';
import { AppError } from '../platform/errors';
import './codes';
import { logger } from '../platform/logger';
import { verifyPassword } from './password';
import { signIn } from './store';
import type { User } from './account-rules';
import { findUserByEmail, signUp } from './users';

/**
 * Signs in with a password. Admitted first (a lockout or the source's rate answers 429 before any
 * lookup or scrypt, the same whether or not the address has an account), then checked; each
 * attempt counts towards this address's lockout from this source only (so nobody elsewhere can
 * lock its owner out), until one succeeds. `presentedCookie` is the session cookie the caller
 * came with, ended when the new one starts.
 */
export async function signInWithPassword(
  email: string,
  password: string,
  source: string,
  presentedCookie: string | undefined,
): Promise<{ user: User; cookie: string }> {
  await admitSignIn(email, source);
  const user = await findUserByEmail(email);
  if (!(await verifyPassword(password, user?.passwordHash)) || !user) {
    throw new AppError('INVALID_CREDENTIALS', 'Email or password is wrong');
  }
  await signInSucceeded(email, source);
  // A store that refused the session (full, or away) started none: the error handler's 503 makes signing in again safe.
  const cookie = await signIn(user, presentedCookie);
  return { user: { id: user.id, email: user.email, role: user.role }, cookie };
}

/**
 * Signs the new user up, then in. The account is what was asked for: if no session can be started
 * after it, it is still returned, without a cookie, so that the client signs in rather than
 * retrying into EMAIL_TAKEN.
 */
export async function signUpAndIn(
  email: string,
  password: string,
  source: string,
  presentedCookie: string | undefined,
): Promise<{ user: User; cookie: string | undefined }> {
  await takeSignUp(source);
  const user = await signUp(email, password);
  const cookie = await signIn(user, presentedCookie).catch((error: Error) => {
    logger.warn('Signed up, but the session could not be started', { userId: user.id, error: { name: error.name, message: error.message } });
    return undefined;
  });
  return { user, cookie };
}
