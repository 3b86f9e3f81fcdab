import * as z from '../shared/platform/zod';
import { mailRetentionEnv, readEnv, rawMailEnv } from '../shared/platform/config';
import { once } from '../shared/platform/once';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { findOrCreateNewsletter } from '../shared/mail/newsletters';
import { mailReleaser } from '../shared/mail/quarantine';

/** `rejected`: the parser refused the raw message (its reason given); the mail stays quarantined. */
const Released = z.strictObject({ id: z.int(), outcome: z.enum(['filed', 'duplicate', 'muted', 'rejected']), reason: z.optional(z.string()) });

const release = once(() => {
  const { RAW_MAIL_BUCKET } = readEnv(rawMailEnv);
  const { RAW_MAIL_RETENTION_DAYS } = readEnv(mailRetentionEnv);
  return mailReleaser({ bucket: RAW_MAIL_BUCKET, retentionDays: RAW_MAIL_RETENTION_DAYS, resolveNewsletter: findOrCreateNewsletter });
});

export const handler = api({
  access: 'user',
  params: z.object({ id: z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)) }),
  answers: { 200: Released },
  // No such mail of the caller's still kept; a mail whose virus scan did not pass (CONFLICT).
  errors: ['NOT_FOUND', 'CONFLICT'],
}).handler(async ({ principal, input }) => json(200, await release()(principal.userId, input.params.id)));
