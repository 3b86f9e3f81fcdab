import fresh from 'fresh';
import * as z from '../platform/zod';
import { notModified, textBody, type Answer, type ApiResult } from '../platform/http/response';
import { admitFeedPoll, knownFeedReader, type FeedReader } from './feed-access';
import { feedBody } from './feed-cache';
import { FEED_TOKEN } from './feed-tokens';
import { FEED_MEDIA, feedIssue, feedPath, issuePage, ISSUE_PAGE_POLICY, listSubscriptions, type FeedFormat, type FeedScope, type JsonFeed } from './feeds';

/** The token in a feed's path; a malformed one is refused before any lookup. */
export const FeedToken = z.string().check(z.regex(FEED_TOKEN));

/** Which feed of the reader's: all their newsletters, or one by id. */
export const FeedScopeParam = z.union([z.literal('all'), z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER))]);

/** What a feed reader sends to ask only for a change. */
export const ConditionalHeaders = z.object({ 'if-none-match': z.optional(z.string()), 'if-modified-since': z.optional(z.string()) });

/** The headers feed answers carry, 200 and 304 alike but Last-Modified, which a 304 carries only to If-Modified-Since alone (each route's answerHeaders). */
export const FEED_ANSWER_HEADERS = {
  ETag: "The reader's feed version: unchanged until an issue is filed or a newsletter renamed, muted or unmuted",
  'Last-Modified': {
    description:
      'When that version began, rounded up to the second; left out while that second lasts, so it is never later than the answer and a change after it always has a later one. A 304 carries it only to a poll that sent If-Modified-Since without If-None-Match',
    required: false,
  },
  'Cache-Control': "private: the feed is one reader's mail, for no shared cache",
} as const;

/** A client may keep a feed this long before asking again (with If-None-Match: a 304 costs one small Redis call). */
const FEED_CACHE_CONTROL = 'private, max-age=300';

/**
 * A version is the clock of its change in microseconds; Last-Modified is the second it falls in,
 * rounded up, so never before the change, and only once that second is past: never later than the
 * answer, and a client that holds it got a copy made after every change of that second, so the
 * next change falls in a later second and a later Last-Modified (If-Modified-Since misses none).
 */
function lastModified(version: string, now: number): Record<string, string> {
  const second = Math.ceil(Number(version) / 1_000_000) * 1000;
  return second <= now ? { 'last-modified': new Date(second).toUTCString() } : {};
}

function validators(reader: FeedReader, now: number): Record<string, string> {
  return { etag: `"${reader.version}"`, ...lastModified(reader.version, now), 'cache-control': FEED_CACHE_CONTROL };
}

type Conditions = { 'if-none-match': string | undefined; 'if-modified-since': string | undefined };

/**
 * 304 when the poll's copy is current. An If-None-Match alone decides (RFC 9110 §13.2.2; fresh
 * reads no date when there is one), and its 304 carries the ETag and Cache-Control only, as §15.4.5
 * asks of a 304 beside an ETag: the client keeps the Last-Modified of its copy, and the feed
 * readers' usual poll formats no date (the 304 path's costliest step of its own in the twin's profile).
 */
function notModifiedAnswer(reader: FeedReader, conditions: Conditions): Answer<304, undefined> | undefined {
  const current =
    conditions['if-none-match'] === undefined ? validators(reader, Date.now()) : { etag: `"${reader.version}"`, 'cache-control': FEED_CACHE_CONTROL };
  return fresh(conditions, current) ? notModified(current) : undefined;
}

export interface FeedPoll {
  token: string;
  scope: FeedScope;
  format: FeedFormat;
  /** The request's headers, If-None-Match and If-Modified-Since among them. */
  headers: Record<string, string | undefined>;
  /** The API as the client reached it, for the feed's links: asked only when a body is built, never for a 304. */
  base: () => string;
}

/**
 * A poll of one feed. One naming a current copy is answered 304 after one Redis read (no script,
 * nothing taken from the token's rate, no MySQL, no body); any other poll takes from the rate
 * and is answered the body at the current version, built once per change whatever the polls at once.
 */
/** A poll's answer: the feed (Atom's XML text, or a JSON Feed typed as one), or 304. */
export function answerFeedPoll(poll: FeedPoll & { format: 'json' }): Promise<Answer<200, z.output<typeof JsonFeed>> | Answer<304, undefined>>;
export function answerFeedPoll(poll: FeedPoll & { format: 'atom' }): Promise<Answer<200, string> | Answer<304, undefined>>;
export async function answerFeedPoll({ token, scope, format, headers, base }: FeedPoll): Promise<ApiResult> {
  // Only the conditions: a request's Cache-Control: no-cache speaks to caches on the way (fetch() adds it to every conditional
  // request its caller makes), and this is the origin, whose 304 to a matching ETag is the poll's cheap answer.
  const conditions: Conditions = { 'if-none-match': headers['if-none-match'], 'if-modified-since': headers['if-modified-since'] };
  const conditional = conditions['if-none-match'] !== undefined || conditions['if-modified-since'] !== undefined;
  if (conditional) {
    const known = await knownFeedReader(token);
    const answer = known && notModifiedAnswer(known, conditions);
    if (answer) return answer;
  }
  const reader = await admitFeedPoll(token);
  const answer = conditional && notModifiedAnswer(reader, conditions);
  if (answer) return answer;
  return textBody(200, await feedBody(reader, scope, format, { base: base(), token }), FEED_MEDIA[format], { headers: validators(reader, Date.now()) });
}

/** An issue's page, for the link of its feed entry: the feed's token opens it, as a session would the JSON route. */
export async function answerIssuePage(token: string, issueId: number): Promise<Answer<200, string>> {
  const reader = await admitFeedPoll(token);
  const page = issuePage(await feedIssue(reader.userId, issueId));
  return textBody(200, page, 'text/html', {
    headers: {
      'content-security-policy': ISSUE_PAGE_POLICY,
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, max-age=3600',
    },
  });
}

/** A feed's URLs, one per format. */
const FeedUrls = z.strictObject({ atom: z.string(), json: z.string() });

/** The reader's feeds: all their newsletters in one, and one per newsletter (paged as GET /me/newsletters is). */
export const MyFeeds = z.strictObject({
  all: FeedUrls,
  newsletters: z.array(z.extend(FeedUrls, { id: z.int(), name: z.string(), muted: z.boolean() })),
  /** The cursor of the next page of newsletters; null after the last. */
  next: z.nullable(z.string()),
});

const urlsOf = (base: string, token: string, scope: FeedScope) => ({
  atom: `${base}${feedPath(token, 'atom', scope)}`,
  json: `${base}${feedPath(token, 'json', scope)}`,
});

/** The reader's feed URLs under their token, created on first use: what GET /me/feeds shows and POST /me/feeds rotates. */
export async function myFeeds(userId: number, token: string, base: string, page: { after?: number; limit: number }): Promise<z.infer<typeof MyFeeds>> {
  const { newsletters, next } = await listSubscriptions(userId, page);
  return {
    all: urlsOf(base, token, 'all'),
    newsletters: newsletters.map((n) => ({ id: n.id, name: n.name, muted: n.muted, ...urlsOf(base, token, n.id) })),
    next,
  };
}
