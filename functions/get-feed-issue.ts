import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { answerIssuePage, FeedToken } from '../shared/mail/feed-polls';

/** One issue as an HTML page, opened by the feed token: the link of its entry in a feed. Does not mark it read. */
export const handler = api({
  access: 'public',
  params: z.object({ token: FeedToken, issueId: z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)) }),
  answers: { 200: z.string() },
  answerMedia: 'text/html',
  answerHeaders: {
    'Content-Security-Policy': 'Nothing on the page runs, loads or submits: inline styles only, in a sandbox',
    'Cache-Control': "private: one reader's mail",
  },
  errors: ['NOT_FOUND', 'RATE_LIMITED'],
}).handler(async (event) => answerIssuePage(event.input.params.token, event.input.params.issueId));
