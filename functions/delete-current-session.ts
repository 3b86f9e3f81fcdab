import { api } from '../shared/api/api';
import { noContent } from '../shared/platform/http/response';
import { clearedSessionCookie, destroySession, parseSessionCookie, SESSION_COOKIE } from '../shared/sessions/store';

export const handler = api({ access: 'user', answers: { 204: null }, errors: [] }).handler(async ({ cookieMap }) => {
  // Authentication already proved the cookie parses and names a live session.
  await destroySession(parseSessionCookie(cookieMap[SESSION_COOKIE])!);
  return noContent({ cookies: [clearedSessionCookie()] });
});
