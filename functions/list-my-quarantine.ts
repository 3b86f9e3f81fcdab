import { mailRetentionEnv, readEnv } from '../shared/platform/config';
import { once } from '../shared/platform/once';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { PageQuery } from '../shared/mail/paging';
import { listQuarantine } from '../shared/mail/quarantine';
import * as z from '../shared/platform/zod';

const Quarantined = z.strictObject({
  mail: z.array(
    z.strictObject({ id: z.int(), reason: z.string(), sender: z.string(), subject: z.string(), authenticated: z.boolean(), quarantinedAt: z.iso.datetime() }),
  ),
  /** The cursor of the next page; null after the last. */
  next: z.nullable(z.string()),
});

const retentionDays = once(() => readEnv(mailRetentionEnv).RAW_MAIL_RETENTION_DAYS);

export const handler = api({ access: 'user', query: PageQuery, answers: { 200: Quarantined }, errors: [] }).handler(async ({ principal, input }) =>
  json(200, await listQuarantine(principal.userId, retentionDays(), { after: input.query.cursor, limit: input.query.limit })),
);
