import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { publicBaseUrl } from '../shared/platform/http/public-url';
import { answerFeedPoll, ConditionalHeaders, FEED_ANSWER_HEADERS, FeedScopeParam, FeedToken } from '../shared/mail/feed-polls';
import { JsonFeed } from '../shared/mail/feeds';

/** A reader's feed as JSON Feed 1.1: all their newsletters, or one; the token in the path is the only credential a feed reader has. */
export const handler = api({
  access: 'public',
  params: z.object({ token: FeedToken, feed: FeedScopeParam }),
  headers: ConditionalHeaders,
  answers: { 200: JsonFeed, 304: null },
  answerMedia: 'application/feed+json',
  answerHeaders: FEED_ANSWER_HEADERS,
  // A token no one holds (or rotated away), a newsletter the reader does not read; past the token's rate.
  errors: ['NOT_FOUND', 'RATE_LIMITED'],
}).handler(async (event) =>
  answerFeedPoll({ token: event.input.params.token, scope: event.input.params.feed, format: 'json', headers: event.headers, base: () => publicBaseUrl(event) }),
);
