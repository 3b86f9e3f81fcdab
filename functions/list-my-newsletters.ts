import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { listNewsletters } from '../shared/mail/inbox';
import { PageQuery } from '../shared/mail/paging';

export const handler = api({ access: 'user', query: PageQuery }).handler(async ({ principal, input }) =>
  json(200, await listNewsletters(principal.userId, { after: input.query.cursor, limit: input.query.limit })),
);
