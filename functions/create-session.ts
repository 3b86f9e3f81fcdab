import * as z from '../shared/zod';
import { AppError } from '../shared/errors';
import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { logger } from '../shared/logger';
import { verifyPassword } from '../shared/sessions/password';
import { createSession, destroySession, parseSessionCookie, SESSION_COOKIE, sessionCookie, sessionRef } from '../shared/sessions/store';
import { findUserByEmail } from '../shared/sessions/users';

const Credentials = z.object({
  email: z.email().check(z.maxLength(254)),
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
});

export const handler = api({ access: 'public', body: Credentials }).handler(async (event) => {
  const { email, password } = event.input.body;
  const user = await findUserByEmail(email);
  if (!(await verifyPassword(password, user?.passwordHash)) || !user) {
    throw new AppError('INVALID_CREDENTIALS', 'Email or password is wrong');
  }

  // A session id that was presented before sign-in is never promoted (session fixation).
  const presented = parseSessionCookie(event.cookieMap[SESSION_COOKIE]);
  const [session] = await Promise.all([createSession(user), presented && destroySession(presented)]);

  logger.info('Signed in', { userId: user.id, sessionRef: sessionRef(session.sessionId) });
  return json(201, { user: { id: user.id, email: user.email, role: user.role } }, { cookies: [sessionCookie(session)] });
});
