import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { listNewsletters } from '../shared/mail/inbox';
import { PageQuery } from '../shared/mail/paging';
import * as z from '../shared/platform/zod';

const Newsletters = z.strictObject({
  newsletters: z.array(
    z.strictObject({
      id: z.int(),
      name: z.string(),
      identity: z.string(),
      authenticated: z.boolean(),
      muted: z.boolean(),
      issues: z.int(),
      unread: z.int(),
      lastIssueAt: z.nullable(z.iso.datetime()),
      listUnsubscribe: z.array(z.string()),
    }),
  ),
  /** The cursor of the next page; null after the last. */
  next: z.nullable(z.string()),
});

export const handler = api({ access: 'user', query: PageQuery, answers: { 200: Newsletters }, errors: [] }).handler(async ({ principal, input }) =>
  json(200, await listNewsletters(principal.userId, { after: input.query.cursor, limit: input.query.limit })),
);
