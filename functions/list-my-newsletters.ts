import * as z from '../shared/zod';
import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { listNewsletters } from '../shared/mail/inbox';

export const handler = api({
  access: 'user',
  query: z.strictObject({
    // The `next` of the previous page: opaque to clients, a newsletter id here.
    cursor: z.optional(z.pipe(z.string().check(z.regex(/^[1-9][0-9]{0,15}$/)), z.transform(Number))),
    limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 50),
  }),
}).handler(async ({ principal, input }) => json(200, await listNewsletters(principal.userId, { after: input.query.cursor, limit: input.query.limit })));
