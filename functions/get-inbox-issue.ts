import { z } from 'zod';
import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { readIssue } from '../shared/mail/inbox';

export const handler = api({
  access: 'user',
  params: z.object({ issueId: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }),
}).handler(async ({ principal, input }) => json(200, await readIssue(principal.userId, input.params.issueId)));
