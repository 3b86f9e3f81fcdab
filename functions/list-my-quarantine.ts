import { api } from '../shared/platform/http/api';
import { json } from '../shared/platform/http/response';
import { PageQuery } from '../shared/mail/paging';
import { listQuarantine } from '../shared/mail/quarantine';

export const handler = api({ access: 'user', query: PageQuery }).handler(async ({ principal, input }) =>
  json(200, await listQuarantine(principal.userId, { after: input.query.cursor, limit: input.query.limit })),
);
