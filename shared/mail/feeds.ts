import { Feed, type Item } from 'feed';
import type { RowDataPacket } from 'mysql2';
import { db } from '../platform/clients/mysql';
import { NotFoundError } from '../platform/errors';
import * as z from '../platform/zod';

export type FeedFormat = 'atom' | 'json';
/** All the reader's newsletters, or one of them by id. */
export type FeedScope = 'all' | number;

const JsonFeedAuthor = z.looseObject({ name: z.optional(z.string()), url: z.optional(z.string()), avatar: z.optional(z.string()) });

/**
 * What a JSON Feed 1.1 reader may count on of ours (https://www.jsonfeed.org/version/1.1/): the
 * fields we write, each of its type. Loose, as the format lets a feed carry extensions.
 */
export const JsonFeed = z.looseObject({
  version: z.literal('https://jsonfeed.org/version/1.1'),
  title: z.string(),
  home_page_url: z.optional(z.string()),
  feed_url: z.optional(z.string()),
  description: z.optional(z.string()),
  authors: z.optional(z.array(JsonFeedAuthor)),
  items: z.array(
    z.looseObject({
      id: z.string(),
      url: z.optional(z.string()),
      title: z.optional(z.string()),
      content_html: z.optional(z.string()),
      summary: z.optional(z.string()),
      date_published: z.optional(z.string()),
      date_modified: z.optional(z.string()),
      authors: z.optional(z.array(JsonFeedAuthor)),
    }),
  ),
});

export const FEED_MEDIA = { atom: 'application/atom+xml', json: 'application/feed+json' } as const;

/** The newest issues a feed holds, as Kill the Newsletter's and most feeds do. */
export const FEED_ENTRIES = 50;
/** No feed's body is longer (UTF-8 bytes): an issue that does not fit is cut, with a link to its page. */
export const FEED_MAX_BYTES = 512 * 1024;
/** What is kept of a cut issue's text, in characters, beside the link to its page. */
const EXCERPT_CHARS = 1_000;

export const feedPath = (token: string, format: FeedFormat, scope: FeedScope) => `/feeds/${token}/${format}/${scope}`;
export const issuePagePath = (token: string, issueId: number) => `/feeds/${token}/issues/${issueId}`;

/** Ids that never change, whatever the token: an entry's is its issue's, a feed's its reader's and scope's. */
export const entryId = (issueId: number) => `urn:surge:issue:${issueId}`;
const feedId = (userId: number, scope: FeedScope) => `urn:surge:reader:${userId}:feed:${scope === 'all' ? 'all' : `newsletter:${scope}`}`;

interface FeedIssue {
  id: number;
  newsletter: string;
  subject: string;
  filedAt: Date;
  html: string | null;
  text: string | null;
}

/** Text in HTML, where Atom's `type="html"` or a page puts it: a subject is the sender's plain text, never markup. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * What XML 1.0 cannot carry at all (C0 controls but tab and newlines, lone surrogates, U+FFFE/F):
 * mail in an odd charset can decode to them, and one would make the whole Atom document unreadable.
 */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export const xmlSafe = (text: string) => text.replace(NOT_XML, '\uFFFD');

/** A page of the reader's newsletters, newest first, as GET /me/newsletters pages them: by id, the cursor the last id shown. */
export async function listSubscriptions(
  userId: number,
  page: { after?: number; limit: number },
): Promise<{ newsletters: { id: number; name: string; muted: boolean }[]; next: string | null }> {
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT newsletter_id, name, muted FROM subscriptions WHERE user_id = ? ${page.after !== undefined ? 'AND newsletter_id < ?' : ''} ORDER BY newsletter_id DESC LIMIT ?`,
    [userId, ...(page.after !== undefined ? [page.after] : []), page.limit + 1],
  );
  const newsletters = rows.slice(0, page.limit).map((r) => ({ id: Number(r.newsletter_id), name: r.name as string, muted: Boolean(r.muted) }));
  return { newsletters, next: rows.length > page.limit ? String(newsletters.at(-1)!.id) : null };
}

/** The title of a scope's feed, and whether it exists for this reader: a newsletter they do not read is 404. */
async function titleOf(userId: number, scope: FeedScope): Promise<string> {
  if (scope === 'all') return 'Newsletters';
  const [[row]] = await db().query<RowDataPacket[]>('SELECT name, muted FROM subscriptions WHERE user_id = ? AND newsletter_id = ?', [userId, scope]);
  if (!row) throw new NotFoundError('No such feed');
  return row.muted ? `${row.name as string} (muted)` : (row.name as string);
}

/**
 * The newest issues of the scope: ids first (on the inbox's index), then those rows in full, so the
 * sort never carries bodies. The all-newsletters feed leaves muted newsletters out, as muting asks
 * for; a muted newsletter's own feed keeps what was filed before it was muted.
 */
async function issuesOf(userId: number, scope: FeedScope): Promise<FeedIssue[]> {
  const [ids] =
    scope === 'all'
      ? await db().query<RowDataPacket[]>(
          `SELECT i.id FROM issues i JOIN subscriptions s ON s.user_id = i.user_id AND s.newsletter_id = i.newsletter_id
            WHERE i.user_id = ? AND NOT s.muted ORDER BY i.id DESC LIMIT ?`,
          [userId, FEED_ENTRIES],
        )
      : await db().query<RowDataPacket[]>('SELECT id FROM issues WHERE user_id = ? AND newsletter_id = ? ORDER BY id DESC LIMIT ?', [
          userId,
          scope,
          FEED_ENTRIES,
        ]);
  if (ids.length === 0) return [];
  const [rows] = await db().query<RowDataPacket[]>(
    `SELECT i.id, s.name, i.subject, i.filed_at, i.html, i.text FROM issues i JOIN subscriptions s ON s.user_id = i.user_id AND s.newsletter_id = i.newsletter_id
      WHERE i.user_id = ? AND i.id IN (?) ORDER BY i.id DESC`,
    [userId, ids.map((r) => Number(r.id))],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    newsletter: r.name as string,
    subject: r.subject as string,
    filedAt: new Date(r.filed_at),
    html: r.html,
    text: r.text,
  }));
}

/** Where a feed's links point: the API as its client reached it, and the token the feed was asked with. */
export interface FeedLinks {
  base: string;
  token: string;
}

/** An issue's body for a feed or its page: its sanitised HTML as stored, else its text, escaped. */
export const issueHtml = (issue: { html: string | null; text: string | null }) => issue.html ?? (issue.text ? `<pre>${escapeHtml(issue.text)}</pre>` : '');

function cutIssue(issue: FeedIssue, page: string): string {
  const text = (issue.text ?? '').slice(0, EXCERPT_CHARS);
  return `${text ? `<p>${escapeHtml(text)}…</p>` : ''}<p><a href="${escapeHtml(page)}">This issue is too big for the feed: read it on its page.</a></p>`;
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

function render(format: FeedFormat, userId: number, scope: FeedScope, title: string, issues: FeedIssue[], contents: string[], links: FeedLinks): string {
  const self = `${links.base}${feedPath(links.token, format, scope)}`;
  // Atom's title is `type="html"` (the library's choice): the subject goes in escaped; JSON Feed's is plain text.
  const text = (value: string) => (format === 'atom' ? xmlSafe(value) : value);
  const feed = new Feed({
    id: feedId(userId, scope),
    title: text(title),
    updated: issues[0]?.filedAt ?? new Date(0),
    generator: false,
    ...(format === 'atom' ? { feed: self } : { feedLinks: { json: self } }),
  });
  issues.forEach((issue, i) => {
    const item: Item = {
      id: entryId(issue.id),
      title: format === 'atom' ? escapeHtml(xmlSafe(issue.subject)) : issue.subject,
      link: `${links.base}${issuePagePath(links.token, issue.id)}`,
      date: issue.filedAt,
      published: issue.filedAt,
      content: text(contents[i]!),
      author: [{ name: text(issue.newsletter) }],
    };
    feed.addItem(item);
  });
  if (format === 'atom') return feed.atom1();
  // The library writes JSON Feed 1 (an item's `author`); 1.1 names the version and lists `authors`.
  const json = JSON.parse(feed.json1()) as { version: string; items: { author?: unknown; authors?: unknown[] }[] };
  json.version = 'https://jsonfeed.org/version/1.1';
  for (const item of json.items) {
    if (item.author) item.authors = [item.author];
    delete item.author;
  }
  return JSON.stringify(json);
}

/**
 * One of a reader's feeds, Atom 1.0 or JSON Feed 1.1, of the newest FEED_ENTRIES issues and at
 * most FEED_MAX_BYTES: issues are kept whole newest first while they fit, and one that does not is
 * cut to an excerpt and a link to its page; should the whole still be too long (escaping), the
 * longest whole issue left is cut, until it fits.
 */
export async function buildFeed(userId: number, scope: FeedScope, format: FeedFormat, links: FeedLinks): Promise<string> {
  const [title, issues] = await Promise.all([titleOf(userId, scope), issuesOf(userId, scope)]);
  const pages = issues.map((issue) => `${links.base}${issuePagePath(links.token, issue.id)}`);
  const contents = issues.map(issueHtml);
  const cut = issues.map(() => false);
  // Room for everything but the issues' bodies: titles (up to 500), names (200), ids, links, dates.
  let room = FEED_MAX_BYTES - 8 * 1024 - issues.length * 2 * 1024;
  contents.forEach((content, i) => {
    const size = byteLength(content);
    if (size <= room) room -= size;
    else {
      contents[i] = cutIssue(issues[i]!, pages[i]!);
      cut[i] = true;
    }
  });
  for (;;) {
    const body = render(format, userId, scope, title, issues, contents, links);
    if (byteLength(body) <= FEED_MAX_BYTES) return body;
    let longest = -1;
    contents.forEach((content, i) => {
      if (!cut[i] && (longest < 0 || content.length > contents[longest]!.length)) longest = i;
    });
    // Every issue cut and still too long cannot happen: 50 cut issues are far below the limit.
    if (longest < 0) throw new Error('A feed of cut issues is still too long');
    contents[longest] = cutIssue(issues[longest]!, pages[longest]!);
    cut[longest] = true;
  }
}

/** One issue of the reader, for its page; anyone else's, or none, is 404. Reading it there does not mark it read: feed readers fetch pages ahead. */
export async function feedIssue(userId: number, issueId: number): Promise<FeedIssue> {
  const [[row]] = await db().query<RowDataPacket[]>(
    `SELECT i.id, s.name, i.subject, i.filed_at, i.html, i.text FROM issues i JOIN subscriptions s ON s.user_id = i.user_id AND s.newsletter_id = i.newsletter_id
      WHERE i.id = ? AND i.user_id = ?`,
    [issueId, userId],
  );
  if (!row) throw new NotFoundError('No such issue');
  return {
    id: Number(row.id),
    newsletter: row.name as string,
    subject: row.subject as string,
    filedAt: new Date(row.filed_at),
    html: row.html,
    text: row.text,
  };
}

/** The content security policy of an issue's page: nothing runs, loads or submits; inline styles only (the mail's own). */
export const ISSUE_PAGE_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox";

/** An issue as a page a feed reader opens: its sanitised HTML, under a policy that lets nothing run even if something slipped through. */
export function issuePage(issue: FeedIssue): string {
  const subject = escapeHtml(issue.subject);
  return [
    '<!doctype html>',
    '<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">',
    `<title>${subject}</title></head><body>`,
    `<header><p>${escapeHtml(issue.newsletter)} · <time datetime="${issue.filedAt.toISOString()}">${issue.filedAt.toUTCString()}</time></p><h1>${subject}</h1></header>`,
    `<main>${issueHtml(issue)}</main>`,
    '</body></html>',
  ].join('\n');
}
