import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { readIssue } from '../shared/mail/inbox';

const Issue = z.strictObject({
  id: z.int(),
  newsletterId: z.int(),
  subject: z.string(),
  sender: z.string(),
  sentAt: z.nullable(z.iso.datetime()),
  filedAt: z.nullable(z.iso.datetime()),
  read: z.boolean(),
  html: z.nullable(z.string()),
  text: z.nullable(z.string()),
  listUnsubscribe: z.array(z.string()),
  attachments: z.array(z.unknown()),
  attachmentCount: z.int(),
});

export const handler = api({
  access: 'user',
  params: z.object({ issueId: z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)) }),
  answers: { 200: Issue },
  errors: ['NOT_FOUND'],
}).handler(async ({ principal, input }) => json(200, await readIssue(principal.userId, input.params.issueId)));
