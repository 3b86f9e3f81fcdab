import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { publicBaseUrl } from '../shared/platform/http/public-url';
import { feedTokenFor } from '../shared/mail/feed-tokens';
import { MyFeeds, myFeeds } from '../shared/mail/feed-polls';
import { PageQuery } from '../shared/mail/paging';

/** The caller's feed URLs, Atom and JSON Feed, of all their newsletters and of each; the token in them is created on first use. */
export const handler = api({ access: 'user', query: PageQuery, answers: { 200: MyFeeds }, errors: [] }).handler(async (event) => {
  const { principal, input } = event;
  return json(
    200,
    await myFeeds(principal.userId, await feedTokenFor(principal.userId), publicBaseUrl(event), { after: input.query.cursor, limit: input.query.limit }),
  );
});
