import { api } from '../shared/api/api';
import { noContent } from '../shared/platform/http/response';
import { logger } from '../shared/platform/logger';
import { clearedSessionCookie, destroyAllSessions } from '../shared/sessions/store';

export const handler = api({ access: 'user', answers: { 204: null }, errors: [] }).handler(async ({ principal }) => {
  const ended = await destroyAllSessions(principal.userId);
  logger.info('Signed out everywhere', { userId: principal.userId, sessionsEnded: ended });
  return noContent({ cookies: [clearedSessionCookie()] });
});
