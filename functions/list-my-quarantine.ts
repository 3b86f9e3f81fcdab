import { mailRetentionEnv, readEnv } from '../shared/platform/config';
import { once } from '../shared/platform/once';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { PageQuery } from '../shared/mail/paging';
import { listQuarantine } from '../shared/mail/quarantine';

const retentionDays = once(() => readEnv(mailRetentionEnv).RAW_MAIL_RETENTION_DAYS);

export const handler = api({ access: 'user', query: PageQuery }).handler(async ({ principal, input }) =>
  json(200, await listQuarantine(principal.userId, retentionDays(), { after: input.query.cursor, limit: input.query.limit })),
);
