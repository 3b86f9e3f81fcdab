import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { publicBaseUrl } from '../shared/platform/http/public-url';
import { rotateFeedToken } from '../shared/mail/feed-access';
import { MyFeeds, myFeeds } from '../shared/mail/feed-polls';
import { PageQuery } from '../shared/mail/paging';

/** Replaces the caller's feed token and answers the new URLs; the old ones answer 404 from now on. The inbox address stays. */
export const handler = api({ access: 'user', query: PageQuery, answers: { 200: MyFeeds }, errors: [] }).handler(async (event) => {
  const { principal, input } = event;
  return json(
    200,
    await myFeeds(principal.userId, await rotateFeedToken(principal.userId), publicBaseUrl(event), { after: input.query.cursor, limit: input.query.limit }),
  );
});
