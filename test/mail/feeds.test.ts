import { parseFeed } from '@rowanmanning/feed-parser';
import type { APIGatewayProxyStructuredResultV2, ScheduledEvent } from 'aws-lambda';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as receiveMail } from '../../functions/receive-mail';
import { LIMITS } from '../../shared/limits/limits';
import { takeRate } from '../../shared/limits/rate';
import { feedKeys, feedsChanged } from '../../shared/mail/feed-access';
import { FEED_CACHE, feedCacheCounterKeys } from '../../shared/mail/feed-cache';
import { feedTokenHash, replaceFeedToken } from '../../shared/mail/feed-tokens';
import { FEED_MAX_BYTES } from '../../shared/mail/feeds';
import { redis } from '../../shared/platform/clients/redis';
import { httpEvent, lambdaContext } from '../support/events';
import { newsletterMail, readers, sesEvent, sesMessageId, storeRawMail, type MailSpec, type Reader } from '../support/mail';
import { route } from '../support/routes';
import { handler as revokeFeedTokens } from '../../functions/revoke-feed-tokens';
import { functions } from '../../functions/table';
import { triggerEvent } from '../../infra/twin/schedules';
import { until } from '../../shared/platform/wait';

const getAtomFeed = await route('get-atom-feed');
const getFeedIssue = await route('get-feed-issue');
const getInboxAddress = await route('get-inbox-address');
const getJsonFeed = await route('get-json-feed');
const getMyFeeds = await route('get-my-feeds');
const muteNewsletter = await route('mute-newsletter');
const rotateFeedToken = await route('rotate-feed-token');
const rotateInboxAddress = await route('rotate-inbox-address');

type Result = APIGatewayProxyStructuredResultV2;
type Handler = (event: never, context: never) => Promise<Result>;
const body = (r: Result) => JSON.parse(r.body ?? 'null');

interface FeedUrls {
  atom: string;
  json: string;
}
interface MyFeeds {
  all: FeedUrls;
  newsletters: (FeedUrls & { id: number; name: string; muted: boolean })[];
  next: string | null;
}

const session = (fn: unknown, reader: Reader, method: string, path: string, pathParameters?: Record<string, string>) =>
  (fn as Handler)(
    httpEvent('get-me', { method, path, cookies: [reader.cookie], ...(pathParameters ? { pathParameters } : {}) }) as never,
    lambdaContext() as never,
  );

const myFeeds = async (reader: Reader): Promise<MyFeeds> => body(await session(getMyFeeds, reader, 'GET', '/me/feeds'));
const rotateFeeds = async (reader: Reader): Promise<MyFeeds> => body(await session(rotateFeedToken, reader, 'POST', '/me/feeds'));
const inboxAddress = async (reader: Reader): Promise<string> => body(await session(getInboxAddress, reader, 'GET', '/me/inbox-address')).address;

/** GETs a feed or issue page URL as API Gateway would hand it to its function: no cookie, the path's parameters. */
function fetchUrl(url: string, headers: Record<string, string> = {}): Promise<Result> {
  const { pathname } = new URL(url);
  const [, , token, kind, last] = pathname.split('/') as [string, string, string, string, string];
  const fn = kind === 'atom' ? getAtomFeed : kind === 'json' ? getJsonFeed : getFeedIssue;
  const pathParameters: Record<string, string> = kind === 'issues' ? { token, issueId: last } : { token, feed: last };
  const event = httpEvent('get-me', { method: 'GET', path: pathname, pathParameters, cookies: [], headers });
  return (fn as Handler)(event as never, lambdaContext() as never);
}

/** Stores a mail and delivers its receipt event, as SES would. */
async function deliver(reader: Reader, spec: MailSpec): Promise<void> {
  const messageId = sesMessageId();
  await storeRawMail(messageId, newsletterMail({ to: reader.address, ...spec }));
  await receiveMail(sesEvent(messageId, [reader.address]), lambdaContext());
}

const xml = new XMLParser({ ignoreAttributes: false, isArray: (name) => ['entry', 'link', 'author'].includes(name) });

/** What RFC 4287 requires of a feed and of each entry, read with a plain XML parser (the feed parser does not show the feed's id). */
function atomDocument(text: string) {
  expect(XMLValidator.validate(text)).toBe(true);
  const feed = xml.parse(text).feed as { id: string; title: string | { '#text': string }; updated: string; entry?: Record<string, unknown>[] };
  expect(feed.id).toMatch(/^urn:surge:reader:\d+:feed:/);
  expect(Number.isNaN(Date.parse(feed.updated))).toBe(false);
  expect(feed.title).toBeTruthy();
  for (const entry of feed.entry ?? []) {
    expect(entry.id).toMatch(/^urn:surge:issue:\d+$/);
    expect(Number.isNaN(Date.parse(entry.updated as string))).toBe(false);
    expect(entry.title).toBeDefined();
    expect((entry.author as { name: string }[])[0]!.name).toBeTruthy();
  }
  return feed;
}

/** What JSON Feed 1.1 requires: its version, a title, and items each with a string id, and at least one of content_html or content_text. */
function jsonFeedDocument(text: string) {
  const feed = JSON.parse(text) as {
    version: string;
    title: string;
    items: { id: string; url: string; title: string; content_html?: string; authors: { name: string }[]; date_published: string }[];
  };
  expect(feed.version).toBe('https://jsonfeed.org/version/1.1');
  expect(typeof feed.title).toBe('string');
  expect(Array.isArray(feed.items)).toBe(true);
  for (const item of feed.items) {
    expect(typeof item.id).toBe('string');
    expect(typeof item.content_html).toBe('string');
    expect(item.authors[0]!.name).toBeTruthy();
  }
  return feed;
}

/** Bodies cached for feeds in bytes, as the budget counts them, by the counters of the windows given (one slot). */
async function cachedFeedBytes(windows: string[]): Promise<number> {
  const values = await redis().mget(...windows);
  return values.reduce((sum, value) => sum + Number(value ?? 0), 0);
}

let db: Awaited<ReturnType<typeof createConnection>>;
beforeAll(async () => {
  db = await createConnection({ uri: process.env.DATABASE_URL! });
});
afterAll(() => db.end());

describe('feeds', () => {
  let reader: Reader;
  let feeds: MyFeeds;

  beforeAll(async () => {
    [reader] = (await readers(1)) as [Reader];
    await deliver(reader, { from: 'Weekly Bits <news@bits.example>', listId: '<bits.example>', subject: 'Bits 1', html: '<p>First <b>bits</b></p>' });
    await deliver(reader, { from: 'Daily Bytes <news@bytes.example>', listId: '<bytes.example>', subject: 'Bytes 1', html: '<p>First bytes</p>' });
    await deliver(reader, { from: 'Weekly Bits <news@bits.example>', listId: '<bits.example>', subject: 'Bits 2', html: '<p>Second bits</p>' });
    feeds = await myFeeds(reader);
  });

  it('shows the feed URLs: all newsletters and each, Atom and JSON Feed, under a token apart from the inbox address', async () => {
    const token = new URL(feeds.all.atom).pathname.split('/')[2]!;

    expect(feeds.newsletters.map((n) => n.name).sort()).toEqual(['Daily Bytes', 'Weekly Bits']);
    expect(feeds.all.atom).toMatch(/^https:\/\/abc123\.execute-api\.eu-west-1\.amazonaws\.com\/feeds\/[A-Za-z0-9_-]{43}\/atom\/all$/);
    expect(feeds.newsletters[0]!.json).toBe(feeds.all.json.replace(/\/all$/, `/${feeds.newsletters[0]!.id}`));
    expect(reader.address).not.toContain(token);
    // Asked again, the same token.
    expect((await myFeeds(reader)).all).toEqual(feeds.all);
  });

  it('answers an Atom 1.0 feed a feed parser reads: ids, dates, the newsletter as author, the subject as title, a link to the issue page', async () => {
    const answer = await fetchUrl(feeds.all.atom);

    expect(answer.statusCode).toBe(200);
    expect(answer.headers!['content-type']).toBe('application/atom+xml; charset=utf-8');
    const document = atomDocument(answer.body!);
    const parsed = parseFeed(answer.body!);
    expect(document.id).toBe(`urn:surge:reader:${reader.id}:feed:all`);
    expect(parsed.title).toBe('Newsletters');
    expect(parsed.items.map((i) => i.title)).toEqual(['Bits 2', 'Bytes 1', 'Bits 1']);
    expect(parsed.items.map((i) => i.authors[0]!.name)).toEqual(['Weekly Bits', 'Daily Bytes', 'Weekly Bits']);
    expect(parsed.items[0]!.content).toContain('<p>Second bits</p>');
    expect(parsed.items[0]!.url).toMatch(new RegExp(`/feeds/[A-Za-z0-9_-]{43}/issues/\\d+$`));
    expect(parsed.updated?.toISOString()).toBe(parsed.items[0]!.updated?.toISOString());
  });

  it('answers a JSON Feed 1.1 of the same issues, and a feed per newsletter in both formats', async () => {
    const bits = feeds.newsletters.find((n) => n.name === 'Weekly Bits')!;

    const all = jsonFeedDocument((await fetchUrl(feeds.all.json)).body!);
    const bitsJson = jsonFeedDocument((await fetchUrl(bits.json)).body!);
    const bitsAtom = await fetchUrl(bits.atom);

    expect(all.items.map((i) => i.title)).toEqual(['Bits 2', 'Bytes 1', 'Bits 1']);
    expect(all.items.map((i) => i.authors[0]!.name)).toEqual(['Weekly Bits', 'Daily Bytes', 'Weekly Bits']);
    expect(bitsJson.title).toBe('Weekly Bits');
    expect(bitsJson.items.map((i) => i.title)).toEqual(['Bits 2', 'Bits 1']);
    atomDocument(bitsAtom.body!);
    expect(parseFeed(bitsAtom.body!).items.map((i) => i.id)).toEqual(bitsJson.items.map((i) => i.id));
  });

  it("opens an entry's link: the issue as a page, under a policy that lets nothing run", async () => {
    const parsed = parseFeed((await fetchUrl(feeds.all.atom)).body!);

    const page = await fetchUrl(parsed.items[0]!.url!);

    expect(page.statusCode).toBe(200);
    expect(page.headers!['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers!['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('<h1>Bits 2</h1>');
    expect(page.body).toContain('<p>Second bits</p>');
  });

  it("answers 404 to a token no one holds, to another reader's issue, and to a newsletter the reader does not read; 400 to a malformed token", async () => {
    const [other] = (await readers(1)) as [Reader];
    const otherFeeds = await myFeeds(other);
    const issuePage = parseFeed((await fetchUrl(feeds.all.atom)).body!).items[0]!.url!;
    const otherToken = new URL(otherFeeds.all.atom).pathname.split('/')[2]!;

    const wrong = await fetchUrl(feeds.all.atom.replace(/\/feeds\/[^/]+/, `/feeds/${'A'.repeat(43)}`));
    const othersIssue = await fetchUrl(issuePage.replace(/\/feeds\/[^/]+/, `/feeds/${otherToken}`));
    const notRead = await fetchUrl(otherFeeds.all.atom.replace(/\/all$/, `/${feeds.newsletters[0]!.id}`));
    const malformed = await fetchUrl(feeds.all.atom.replace(/\/feeds\/[^/]+/, '/feeds/short'));

    expect([wrong.statusCode, othersIssue.statusCode, notRead.statusCode, malformed.statusCode]).toEqual([404, 404, 404, 400]);
    expect(body(wrong).error.code).toBe('NOT_FOUND');
  });

  it('answers 304 with no body to a current ETag or date, and the new feed once an issue is filed', async () => {
    // Last-Modified comes once the second of the feed's last change is past.
    let first!: Result;
    await until(async () => (first = await fetchUrl(feeds.all.atom)).headers!['last-modified'] !== undefined, 10_000, 'a Last-Modified');
    const etag = String(first.headers!.etag);
    const lastModified = String(first.headers!['last-modified']);

    const byEtag = await fetchUrl(feeds.all.atom, { 'if-none-match': etag });
    const byDate = await fetchUrl(feeds.all.json, { 'if-modified-since': lastModified });
    // What fetch() sends with a conditional header of the caller's: for a cache, never for the origin's own 304.
    const noCache = await fetchUrl(feeds.all.atom, { 'if-none-match': etag, 'cache-control': 'no-cache', pragma: 'no-cache' });
    await deliver(reader, { from: 'Daily Bytes <news@bytes.example>', listId: '<bytes.example>', subject: 'Bytes 2' });
    const after = await fetchUrl(feeds.all.atom, { 'if-none-match': etag });

    expect(first.headers!['cache-control']).toBe('private, max-age=300');
    expect(byEtag.statusCode).toBe(304);
    expect(byEtag.body).toBeUndefined();
    expect(byEtag.headers!.etag).toBe(etag);
    // RFC 9110 §15.4.5: beside an ETag a 304 carries no other metadata; to a date alone, the date it was asked by.
    expect(byEtag.headers!['last-modified']).toBeUndefined();
    expect(byEtag.headers!['cache-control']).toBe('private, max-age=300');
    expect(byDate.statusCode).toBe(304);
    expect(byDate.headers!['last-modified']).toBe(lastModified);
    expect(noCache.statusCode).toBe(304);
    expect(after.statusCode).toBe(200);
    expect(after.headers!.etag).not.toBe(etag);
    expect(parseFeed(after.body!).items[0]!.title).toBe('Bytes 2');
  });

  it('gives a Last-Modified never later than the answer, and later than the one before for every change, two in one second too', async () => {
    // Prepare: a reader's copy with its Last-Modified, taken right after a change (in its second) and once it came.
    await feedsChanged(reader.id);
    const answers: { lastModified?: string; at: number }[] = [];
    const poll = async (headers: Record<string, string> = {}) => {
      const answer = await fetchUrl(feeds.all.json, headers);
      const lastModified = answer.headers?.['last-modified'];
      answers.push({ ...(lastModified === undefined ? {} : { lastModified: String(lastModified) }), at: Date.now() });
      return answer;
    };
    await poll();
    let copy!: Result;
    await until(async () => (copy = await poll()).headers!['last-modified'] !== undefined, 10_000, 'a Last-Modified');

    // Act: two changes, the second at once after the first (within one second, mostly); after each the reader asks by date
    // only, with the newest Last-Modified it holds: the one answered between them, if any.
    await feedsChanged(reader.id);
    const afterOne = await poll({ 'if-modified-since': String(copy.headers!['last-modified']) });
    await feedsChanged(reader.id);
    const afterTwo = await poll({ 'if-modified-since': String(afterOne.headers!['last-modified'] ?? copy.headers!['last-modified']) });

    // Assess
    expect([afterOne.statusCode, afterTwo.statusCode]).toEqual([200, 200]);
    for (const answer of answers.filter((a) => a.lastModified !== undefined)) expect(Date.parse(answer.lastModified!)).toBeLessThanOrEqual(answer.at);
  });

  it('builds a feed once per change however many polls ask for it at once', async () => {
    await feedsChanged(reader.id);
    // The same windows before and after, whichever window the polls fall in.
    const windows = feedCacheCounterKeys(Date.now());
    const before = await cachedFeedBytes(windows);

    const answers = await Promise.all(Array.from({ length: 40 }, () => fetchUrl(feeds.all.json)));

    expect(new Set(answers.map((a) => a.statusCode))).toEqual(new Set([200]));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    // The budget's counter grew by one body (and its overhead), not forty.
    const grown = (await cachedFeedBytes(windows)) - before;
    expect(grown).toBeGreaterThanOrEqual(Buffer.byteLength(answers[0]!.body!));
    expect(grown).toBeLessThan(2 * Buffer.byteLength(answers[0]!.body!));
  });

  it('leaves a muted newsletter out of the all-newsletters feed; its own feed keeps its issues and says it is muted', async () => {
    const bytes = feeds.newsletters.find((n) => n.name === 'Daily Bytes')!;
    const before = await fetchUrl(feeds.all.atom);

    await session(muteNewsletter, reader, 'POST', `/me/newsletters/${bytes.id}/mute`, { id: String(bytes.id) });
    const all = await fetchUrl(feeds.all.atom, { 'if-none-match': String(before.headers!.etag) });
    const own = jsonFeedDocument((await fetchUrl(bytes.json)).body!);

    expect(all.statusCode).toBe(200);
    expect(parseFeed(all.body!).items.map((i) => i.authors[0]!.name)).toEqual(['Weekly Bits', 'Weekly Bits']);
    expect(own.title).toBe('Daily Bytes (muted)');
    expect(own.items.map((i) => i.title)).toEqual(['Bytes 2', 'Bytes 1']);
  });
});

describe('feed tokens', () => {
  it('rotating the feed token retires the old URLs, keeps every entry id, and leaves the inbox address alone', async () => {
    const [reader] = (await readers(1)) as [Reader];
    await deliver(reader, { subject: 'Kept' });
    const old = await myFeeds(reader);
    const oldFeed = await fetchUrl(old.all.atom);
    const oldIds = parseFeed(oldFeed.body!).items.map((i) => i.id);
    const address = await inboxAddress(reader);

    const rotated = await rotateFeeds(reader);

    expect(rotated.all.atom).not.toBe(old.all.atom);
    expect((await myFeeds(reader)).all).toEqual(rotated.all);
    expect((await fetchUrl(old.all.atom)).statusCode).toBe(404);
    // A reader that still holds the old feed's copy is not told it is current, even where the revocation's "-" landed and
    // its removal of the version did not.
    const oldEtag = oldFeed.headers!.etag as string;
    expect((await fetchUrl(old.all.atom, { 'if-none-match': oldEtag })).statusCode).toBe(404);
    await redis().set(feedKeys(feedTokenHash(new URL(old.all.atom).pathname.split('/')[2]!)).version, oldEtag.slice(1, -1));
    expect((await fetchUrl(old.all.atom, { 'if-none-match': oldEtag })).statusCode).toBe(404);
    expect((await fetchUrl(old.all.json)).statusCode).toBe(404);
    const fresh = await fetchUrl(rotated.all.atom);
    expect(fresh.statusCode).toBe(200);
    expect(parseFeed(fresh.body!).items.map((i) => i.id)).toEqual(oldIds);
    expect(await inboxAddress(reader)).toBe(address);
  });

  it('a rotation answered 503 after MySQL replaced the token: the retry revokes the token the reader wanted dead, and so does the sweep', async () => {
    // Prepare: two readers whose feeds Redis knows, each with a rotation that replaced the token in MySQL and failed at Redis (its step alone).
    const [retrier, leaver] = (await readers(2)) as [Reader, Reader];
    const [retriersOld, leaversOld] = [await myFeeds(retrier), await myFeeds(leaver)];
    expect((await fetchUrl(retriersOld.all.atom)).statusCode).toBe(200);
    expect((await fetchUrl(leaversOld.all.atom)).statusCode).toBe(200);
    await replaceFeedToken(retrier.id);
    await replaceFeedToken(leaver.id);

    // Act: one reader retries the rotation; the other never does, and then the sweep runs.
    const retried = await rotateFeeds(retrier);
    const afterRetry = [await fetchUrl(retriersOld.all.atom), await fetchUrl(leaversOld.all.atom)];
    await revokeFeedTokens(triggerEvent(functions.find((f) => f.id === 'revoke-feed-tokens')!) as ScheduledEvent, lambdaContext());

    // Assess: the retry revoked the retrier's; the leaver's answered until the sweep.
    expect(afterRetry.map((a) => a.statusCode)).toEqual([404, 200]);
    expect((await fetchUrl(leaversOld.all.atom)).statusCode).toBe(404);
    expect((await fetchUrl(retried.all.atom)).statusCode).toBe(200);
    const [left] = await db.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM feed_token_revocations WHERE user_id IN (?, ?)', [retrier.id, leaver.id]);
    expect(Number(left[0]!.n)).toBe(0);
  });

  it('rotating the inbox address leaves the feeds working under the same token', async () => {
    const [reader] = (await readers(1)) as [Reader];
    const before = await myFeeds(reader);

    await session(rotateInboxAddress, reader, 'POST', '/me/inbox-address');

    expect((await myFeeds(reader)).all).toEqual(before.all);
    expect((await fetchUrl(before.all.atom)).statusCode).toBe(200);
  });

  it('finds a token Redis has forgotten in MySQL, and a rotated one stays 404 though MySQL was read before the rotation', async () => {
    const [reader] = (await readers(1)) as [Reader];
    const feeds = await myFeeds(reader);
    const token = new URL(feeds.all.atom).pathname.split('/')[2]!;
    const keys = feedKeys(feedTokenHash(token));

    await redis().del(keys.reader, keys.version);
    const relearnt = await fetchUrl(feeds.all.atom);
    await rotateFeeds(reader);
    const rotated = await fetchUrl(feeds.all.atom);

    expect(relearnt.statusCode).toBe(200);
    expect(rotated.statusCode).toBe(404);
    expect(await redis().get(keys.reader)).toBe('-');
  });

  it("takes each poll answered with a body from the token's rate, and a 304 nothing", async () => {
    const [reader] = (await readers(1)) as [Reader];
    const feeds = await myFeeds(reader);
    const first = await fetchUrl(feeds.all.atom);
    const rate = feedKeys(feedTokenHash(new URL(feeds.all.atom).pathname.split('/')[2]!)).rate;
    const interval = LIMITS.feedPollsPerToken.periodMs / LIMITS.feedPollsPerToken.count;

    const polls = [
      ...(await Promise.all([1, 2, 3].map(() => fetchUrl(feeds.all.atom, { 'if-none-match': first.headers!.etag as string })))),
      await fetchUrl(feeds.all.atom),
    ];

    expect(polls.map((p) => p.statusCode)).toEqual([304, 304, 304, 200]);
    // The first poll taught Redis the token (taking nothing); the last took one poll from the empty rate, which puts its TAT
    // one interval past that poll. Had the 304s taken too, it would be four.
    expect(await redis().pttl(rate)).toBeGreaterThan(0);
    expect(await redis().pttl(rate)).toBeLessThanOrEqual(interval);
  });

  it("answers 429 with Retry-After past the token's rate, and still 304 to a current copy", async () => {
    const [reader] = (await readers(1)) as [Reader];
    const feeds = await myFeeds(reader);
    const first = await fetchUrl(feeds.all.atom);
    expect(first.statusCode).toBe(200);
    const token = new URL(feeds.all.atom).pathname.split('/')[2]!;
    const { count, periodMs } = LIMITS.feedPollsPerToken;
    // Used up as that many polls would, each costing ten, so none comes back while the test runs.
    for (let taken = 0; taken < count; taken += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, count - taken) }, () =>
          takeRate(feedKeys(feedTokenHash(token)).rate, { count, periodMs: periodMs * 10 }).catch(() => undefined),
        ),
      );
    }

    const answer = await fetchUrl(feeds.all.atom);
    const current = await fetchUrl(feeds.all.atom, { 'if-none-match': first.headers!.etag as string });

    expect(answer.statusCode).toBe(429);
    expect(Number(answer.headers!['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(body(answer).error.code).toBe('RATE_LIMITED');
    expect(current.statusCode).toBe(304);
  });
});

describe('feeds of hostile and large mail', () => {
  it('keeps scripts, control characters and a huge subject harmless in both feeds and on the issue page', async () => {
    const [reader] = (await readers(1)) as [Reader];
    const subject = `<script>alert(1)</script> & ]]> ${'long '.repeat(200)}`;
    await deliver(reader, {
      subject,
      from: '"<img src=x onerror=alert(1)>" <hostile@attack.example>',
      listId: '<hostile.attack.example>',
      html: '<script>alert(1)</script><img src=x onerror="alert(1)"><a href="javascript:alert(1)">x</a><p>still\u0001here ]]> end</p>',
    });
    const feeds = await myFeeds(reader);

    const atom = (await fetchUrl(feeds.all.atom)).body!;
    const json = jsonFeedDocument((await fetchUrl(feeds.all.json)).body!);
    const parsed = parseFeed(atom);
    const page = (await fetchUrl(parsed.items[0]!.url!)).body!;

    atomDocument(atom);
    // Atom's title is HTML: the subject is in it escaped, so a reader shows it as the text it is, never runs it.
    expect(atom).not.toMatch(/<script|<img[^>]*onerror|javascript:|\u0001/i);
    // A name is plain text, escaped as XML text: the reader shows it as written.
    expect(parsed.items[0]!.authors[0]!.name).toBe('<img src=x onerror=alert(1)>');
    expect(parsed.items[0]!.title).toMatch(/^<script>alert\(1\)<\/script> & \]\]> long/);
    expect(parsed.items[0]!.content).not.toMatch(/<script|onerror|javascript:/i);
    expect(parsed.items[0]!.content).toContain('end');
    expect(json.items[0]!.title).toContain('<script>alert(1)</script>');
    expect(json.items[0]!.content_html).not.toMatch(/<script|onerror|javascript:/i);
    expect(page).not.toMatch(/<script|<img[^>]*onerror|javascript:/i);
    expect(page).toContain('&#60;img src=x onerror=alert(1)&#62;');
    expect(page).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
  });

  it('holds a feed to 512 KiB: issues too big for it are cut, with a link to their page', async () => {
    const [reader] = (await readers(1)) as [Reader];
    await deliver(reader, { subject: 'small', html: '<p>small</p>' });
    const [[{ newsletter_id: newsletterId }]] = (await db.query<RowDataPacket[]>('SELECT newsletter_id FROM issues WHERE user_id = ?', [
      reader.id,
    ])) as unknown as [[{ newsletter_id: number }]];
    // Fifty issues of 100 KB each, filed straight into MySQL: ten times what the feed may hold.
    const big = `<p>${'x'.repeat(100 * 1024)}</p>`;
    const rows = Array.from({ length: 50 }, (_, i) => [reader.id, newsletterId, sesMessageId(), `big ${i}`, 'a@b.example', big, 'text of a big issue', '[]']);
    await db.query('INSERT INTO issues (user_id, newsletter_id, ses_message_id, subject, sender, html, text, attachments) VALUES ?', [rows]);
    await feedsChanged(reader.id);
    const feeds = await myFeeds(reader);

    for (const url of [feeds.all.atom, feeds.all.json]) {
      const answer = (await fetchUrl(url)).body!;
      const items = url.endsWith('/atom/all')
        ? parseFeed(answer).items.map((i) => ({ content: i.content!, url: i.url! }))
        : jsonFeedDocument(answer).items.map((i) => ({ content: i.content_html!, url: i.url }));

      expect(Buffer.byteLength(answer)).toBeLessThanOrEqual(FEED_MAX_BYTES);
      expect(items).toHaveLength(50);
      expect(items[0]!.content).toContain(big);
      const cut = items.filter((i) => !i.content.includes(big));
      expect(cut.length).toBeGreaterThan(40);
      for (const item of cut) expect(item.content).toContain(`<a href="${item.url}">`);
    }
  });

  it('keeps no body past the byte budget: the feed is built for its poll and Redis holds no more than before', async () => {
    const [reader] = (await readers(1)) as [Reader];
    await deliver(reader, { subject: 'Past the budget' });
    const feeds = await myFeeds(reader);
    const windows = feedCacheCounterKeys(Date.now());
    // The budget used up, as that many bytes of bodies filled in this window would.
    await redis().incrby(windows[2]!, FEED_CACHE.budgetBytes);
    try {
      const before = await cachedFeedBytes(windows);

      const answer = await fetchUrl(feeds.all.atom);

      expect(answer.statusCode).toBe(200);
      expect(parseFeed(answer.body!).items[0]!.title).toBe('Past the budget');
      expect(await cachedFeedBytes(windows)).toBe(before);
    } finally {
      await redis().decrby(windows[2]!, FEED_CACHE.budgetBytes);
    }
  });
});
