import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { readIssue } from '../shared/mail/inbox';

export const handler = api({
  access: 'user',
  params: z.object({ issueId: z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)) }),
}).handler(async ({ principal, input }) => json(200, await readIssue(principal.userId, input.params.issueId)));
