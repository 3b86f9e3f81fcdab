import * as z from '../shared/platform/zod';
import { mailRetentionEnv, readEnv, rawMailEnv } from '../shared/platform/config';
import { once } from '../shared/platform/once';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { findOrCreateNewsletter } from '../shared/mail/newsletters';
import { mailReleaser } from '../shared/mail/quarantine';

const release = once(() => {
  const { RAW_MAIL_BUCKET } = readEnv(rawMailEnv);
  const { RAW_MAIL_RETENTION_DAYS } = readEnv(mailRetentionEnv);
  return mailReleaser({ bucket: RAW_MAIL_BUCKET, retentionDays: RAW_MAIL_RETENTION_DAYS, resolveNewsletter: findOrCreateNewsletter });
});

export const handler = api({
  access: 'user',
  params: z.object({ id: z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)) }),
}).handler(async ({ principal, input }) => json(200, await release()(principal.userId, input.params.id)));
