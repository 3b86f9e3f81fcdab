import { z } from 'zod';
import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { listInbox } from '../shared/mail/inbox';

const id = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const handler = api({
  access: 'user',
  query: z.strictObject({
    newsletter: id.optional(),
    page: z.coerce.number().int().min(1).max(10_000).default(1),
    size: z.coerce.number().int().min(1).max(50).default(20),
  }),
}).handler(async ({ principal, input }) => json(200, await listInbox(principal.userId, input.query)));
