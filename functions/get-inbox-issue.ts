import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { Issue, readIssue } from '../shared/mail/inbox';

export const handler = api({
  access: 'user',
  params: z.object({ issueId: z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)) }),
  answers: { 200: Issue },
  errors: ['NOT_FOUND'],
}).handler(async ({ principal, input }) => json(200, await readIssue(principal.userId, input.params.issueId)));
