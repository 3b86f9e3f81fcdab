import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { IssueSummary, listInbox } from '../shared/mail/inbox';

const id = z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER));
const Issues = z.strictObject({
  page: z.int(),
  size: z.int(),
  issues: z.array(IssueSummary),
});

export const handler = api({
  access: 'user',
  query: z.strictObject({
    newsletter: z.optional(id),
    page: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(10_000)), 1),
    size: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(50)), 20),
  }),
  answers: { 200: Issues },
  // A newsletter asked for that the caller does not read.
  errors: ['NOT_FOUND'],
}).handler(async ({ principal, input }) => json(200, await listInbox(principal.userId, input.query)));
