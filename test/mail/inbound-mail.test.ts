import type { APIGatewayProxyStructuredResultV2, SESReceipt } from 'aws-lambda';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as receiveMail } from '../../functions/receive-mail';
import { LIMITS } from '../../shared/limits/limits';
import { mailRateKeys, newNewslettersKey } from '../../shared/limits/rate';
import { redis } from '../../shared/platform/clients/redis';
import { until } from '../../shared/platform/wait';
import { poolConnectionIds } from '../support/database';
import { httpEvent, lambdaContext } from '../support/events';
import { newsletterMail, readers, sesEvent, sesMessageId, storeRawMail, type MailSpec, type Reader } from '../support/mail';
import { exhaust } from '../support/rates';
import { route } from '../support/routes';

const getInboxAddress = await route('get-inbox-address');
const getIssue = await route('get-inbox-issue');
const listInbox = await route('list-my-inbox');
const listNewsletters = await route('list-my-newsletters');
const listQuarantine = await route('list-my-quarantine');
const muteNewsletter = await route('mute-newsletter');
const releaseMail = await route('release-quarantined-mail');
const rotateInboxAddress = await route('rotate-inbox-address');
const unmuteNewsletter = await route('unmute-newsletter');

type Result = APIGatewayProxyStructuredResultV2;
type Handler = (event: never, context: never) => Promise<Result>;
const body = (r: Result) => JSON.parse(r.body ?? 'null');

function call(fn: unknown, reader: Reader, method: string, path: string, extra: { pathParameters?: Record<string, string>; query?: string } = {}) {
  const event = httpEvent('get-me', { method, path, cookies: [reader.cookie], ...(extra.pathParameters ? { pathParameters: extra.pathParameters } : {}) });
  if (extra.query !== undefined) {
    event.rawQueryString = extra.query;
    event.queryStringParameters = Object.fromEntries(new URLSearchParams(extra.query));
  }
  return (fn as Handler)(event as never, lambdaContext() as never);
}

const inbox = (reader: Reader, query = '') => call(listInbox, reader, 'GET', '/me/inbox', { query });
const newsletterPage = (reader: Reader, query = '') => call(listNewsletters, reader, 'GET', '/me/newsletters', { query });
const newsletters = async (reader: Reader) => body(await newsletterPage(reader)).newsletters;
const quarantine = async (reader: Reader, query = '') => body(await call(listQuarantine, reader, 'GET', '/me/quarantine', { query }));
const release = (reader: Reader, id: number | string) =>
  call(releaseMail, reader, 'POST', `/me/quarantine/${id}/release`, { pathParameters: { id: String(id) } });

/** Stores a mail and delivers its receipt event, as SES would; returns the SES message id. */
async function deliver(recipients: string[], spec: MailSpec = {}, receipt: Partial<SESReceipt> = {}, fixture?: 'receipt-no-dmarc'): Promise<string> {
  const messageId = sesMessageId();
  await storeRawMail(messageId, newsletterMail({ to: recipients[0], ...spec }));
  const event = sesEvent(messageId, recipients, receipt, fixture);
  // SES reads From and Subject into the event's common headers: the rates find the sender there.
  const { commonHeaders } = event.Records[0]!.ses.mail;
  if (spec.from) commonHeaders.from = [spec.from];
  if (spec.subject) commonHeaders.subject = spec.subject;
  await receiveMail(event, lambdaContext());
  return messageId;
}

/** A sender domain of its own per use, so no two tests share its rates. */
const senderDomain = () => `sender-${sesMessageId().slice(0, 8)}.example`;

let db: Awaited<ReturnType<typeof createConnection>>;
async function outcomesOf(messageId: string) {
  const [rows] = await db.query<RowDataPacket[]>('SELECT recipient, outcome, reason FROM mail_outcomes WHERE ses_message_id = ? ORDER BY recipient', [
    messageId,
  ]);
  return rows.map((r) => ({ recipient: r.recipient, outcome: r.outcome, reason: r.reason }));
}

const uniqueList = () => `<list-${sesMessageId().slice(0, 10)}.bits.example>`;

beforeAll(async () => {
  db = await createConnection({ uri: process.env.DATABASE_URL! });
});
afterAll(() => db.end());

describe('inbound newsletter mail', () => {
  it('files an issue with sanitised HTML, counts it unread, and marks it read when opened', async () => {
    // Prepare
    const [reader] = await readers(1);
    const html = '<p onclick="steal()">Hi <script>alert(1)</script><a href="javascript:alert(2)">x</a><img src="https://track.example/p.gif"></p>';

    // Act
    await deliver([reader!.address], {
      listId: `"Weekly Bits" ${uniqueList()}`,
      subject: 'Issue 7',
      html,
      listUnsubscribe: '<javascript:alert(1)>, <https://bits.example/u/1>, <mailto:leave@bits.example>',
    });
    const [newsletter] = await newsletters(reader!);
    const [summary] = body(await inbox(reader!)).issues;
    const opened = body(await call(getIssue, reader!, 'GET', `/me/inbox/${summary.id}`, { pathParameters: { issueId: String(summary.id) } }));

    // Assess
    expect(newsletter).toMatchObject({ name: 'Weekly Bits', issues: 1, unread: 1, muted: false });
    expect(summary).toMatchObject({ subject: 'Issue 7', sender: 'Weekly Bits <news@bits.example>', read: false });
    expect(opened).toMatchObject({
      read: true,
      listUnsubscribe: ['https://bits.example/u/1', 'mailto:leave@bits.example'],
      text: expect.stringContaining('Hello, reader.'),
    });
    expect(opened.html).not.toMatch(/script|onclick|javascript:|\ssrc=/i);
    expect(opened.html).toContain('data-remote-src="https://track.example/p.gif"');
    expect((await newsletters(reader!))[0].unread).toBe(0);
  });

  it("quarantines a reader's newsletters past the day's cap of new ones, and still files the ones they have and other readers' mail", async () => {
    // Prepare
    const [reader, other] = await readers(2);
    const known = uniqueList();
    await deliver([reader!.address], { listId: known });
    for (let i = 1; i < LIMITS.newNewslettersPerReader.count; i++) await deliver([reader!.address], { listId: uniqueList() });

    // Act
    const overCap = await deliver([reader!.address, other!.address], { listId: uniqueList() });
    const ofKnown = await deliver([reader!.address], { listId: known, subject: 'Issue 2' });

    // Assess
    expect(await outcomesOf(overCap)).toEqual(
      [
        { recipient: reader!.address, outcome: 'quarantined', reason: 'newsletter-cap' },
        { recipient: other!.address, outcome: 'filed', reason: '' },
      ].sort((a, b) => a.recipient.localeCompare(b.recipient)),
    );
    expect(await outcomesOf(ofKnown)).toEqual([{ recipient: reader!.address, outcome: 'filed', reason: '' }]);
    expect(await newsletters(reader!)).toHaveLength(LIMITS.newNewslettersPerReader.count);
  });

  it('holds the cap when mails of many new newsletters arrive for a reader at once', async () => {
    const [reader] = await readers(1);

    const messageIds = await Promise.all(
      Array.from({ length: LIMITS.newNewslettersPerReader.count + 5 }, () => deliver([reader!.address], { listId: uniqueList() })),
    );

    const outcomes = (await Promise.all(messageIds.map(outcomesOf))).flat().map((o) => o.outcome);
    expect(outcomes.filter((o) => o === 'filed')).toHaveLength(LIMITS.newNewslettersPerReader.count);
    expect(outcomes.filter((o) => o === 'quarantined')).toHaveLength(5);
  });

  it("holds the cap over the reader's stored newsletters when Redis has lost what it admitted", async () => {
    const [reader] = await readers(1);
    for (let i = 0; i < LIMITS.newNewslettersPerReader.count; i++) await deliver([reader!.address], { listId: uniqueList() });
    await redis().del(newNewslettersKey(reader!.id));

    const overCap = await deliver([reader!.address], { listId: uniqueList() });

    expect(await outcomesOf(overCap)).toEqual([{ recipient: reader!.address, outcome: 'quarantined', reason: 'newsletter-cap' }]);
  });

  it('shows a newsletter to its reader under the name the latest mail gave it', async () => {
    const [reader] = await readers(1);
    const listId = uniqueList();
    await deliver([reader!.address], { listId: `"Old Name" ${listId}` });

    await deliver([reader!.address], { listId: `"New Name" ${listId}` });

    expect((await newsletters(reader!)).map((n: { name: string; issues: number }) => [n.name, n.issues])).toEqual([['New Name', 2]]);
  });

  it('pages through the newsletters by cursor, each once, newest first', async () => {
    // Prepare
    const [reader] = await readers(1);
    for (let i = 0; i < 5; i++) await deliver([reader!.address], { listId: uniqueList() });

    // Act
    const pages = [];
    let query = 'limit=2';
    for (;;) {
      const page = body(await newsletterPage(reader!, query));
      pages.push(page.newsletters.map((n: { id: number }) => n.id));
      if (page.next === null) break;
      query = `limit=2&cursor=${page.next}`;
    }

    // Assess
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    const ids = pages.flat();
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(5);
  });

  it.each(['cursor=abc', 'cursor=0', 'cursor=-1', 'cursor=1e3', 'limit=0', 'limit=101', 'limit=x', 'page=2'])(
    'answers 400 to GET /me/newsletters?%s',
    async (query) => {
      const [reader] = await readers(1);

      const result = await newsletterPage(reader!, query);

      expect([result.statusCode, body(result).error.code]).toEqual([400, 'VALIDATION_FAILED']);
    },
  );

  it('lists quarantined mail to its reader and files it once released, as from an unauthenticated sender unless SES authenticated it', async () => {
    // Prepare
    const [reader] = await readers(1);
    await deliver([reader!.address], { listId: uniqueList(), subject: 'Maybe spam' }, { spamVerdict: { status: 'GRAY' }, dmarcVerdict: { status: 'GRAY' } });
    const [held] = (await quarantine(reader!)).mail;

    // Act
    const released = await release(reader!, held.id);
    const again = await release(reader!, held.id);

    // Assess
    expect(held).toMatchObject({ reason: 'spam-gray', sender: 'Weekly Bits <news@bits.example>', subject: 'Maybe spam', authenticated: false });
    expect([released.statusCode, body(released)]).toEqual([200, { id: held.id, outcome: 'filed' }]);
    expect(body(again)).toEqual({ id: held.id, outcome: 'duplicate' });
    expect(body(await inbox(reader!)).issues.map((i: { subject: string }) => i.subject)).toEqual(['Maybe spam']);
    expect((await newsletters(reader!)).map((n: { authenticated: boolean }) => n.authenticated)).toEqual([false]);
    expect(await quarantine(reader!)).toEqual({ mail: [], next: null });
  });

  it('releases a newsletter past the cap when its reader asks for it', async () => {
    const [reader] = await readers(1);
    for (let i = 0; i < LIMITS.newNewslettersPerReader.count; i++) await deliver([reader!.address], { listId: uniqueList() });
    await deliver([reader!.address], { listId: `"One Too Many" ${uniqueList()}`, subject: 'Over the cap' });
    const [held] = (await quarantine(reader!)).mail;

    const released = body(await release(reader!, held.id));

    expect(held).toMatchObject({ reason: 'newsletter-cap', subject: 'Over the cap', authenticated: true });
    expect(released).toEqual({ id: held.id, outcome: 'filed' });
    expect((await newsletters(reader!)).map((n: { name: string }) => n.name)).toContain('One Too Many');
  });

  it('pages quarantined mail, keeps it from other readers, and never releases mail whose virus scan did not pass', async () => {
    const [reader, intruder] = await readers(2);
    for (let i = 0; i < 3; i++) await deliver([reader!.address], { listId: uniqueList() }, { spamVerdict: { status: 'FAIL' } });
    await deliver([reader!.address], { listId: uniqueList() }, { virusVerdict: { status: 'PROCESSING_FAILED' } });

    const first = await quarantine(reader!, 'limit=2');
    const second = await quarantine(reader!, `limit=2&cursor=${first.next}`);
    const unscanned = [...first.mail, ...second.mail].find((m: { reason: string }) => m.reason.startsWith('virus'));
    const results = [
      await release(intruder!, first.mail[0].id),
      await release(reader!, unscanned.id),
      await release(reader!, 'abc'),
      await call(listQuarantine, reader!, 'GET', '/me/quarantine', { query: 'cursor=x' }),
    ];

    expect([first.mail.length, second.mail.length, second.next]).toEqual([2, 2, null]);
    expect(await quarantine(intruder!)).toEqual({ mail: [], next: null });
    expect(results.map((r) => [r.statusCode, body(r).error.code])).toEqual([
      [404, 'NOT_FOUND'],
      [409, 'CONFLICT'],
      [400, 'VALIDATION_FAILED'],
      [400, 'VALIDATION_FAILED'],
    ]);
    expect(body(await inbox(reader!)).issues).toEqual([]);
  });

  it("shows each newsletter with the unsubscribe links of its reader's latest issue that had them", async () => {
    // Prepare
    const [reader] = await readers(1);
    const [linked, unlinked] = [uniqueList(), uniqueList()];

    // Act
    await deliver([reader!.address], { listId: `"Linked" ${linked}`, listUnsubscribe: '<https://bits.example/u/old>' });
    await deliver([reader!.address], {
      listId: `"Linked" ${linked}`,
      listUnsubscribe: '<mailto:leave@bits.example?subject=unsubscribe>, <https://bits.example/u/new>',
    });
    await deliver([reader!.address], { listId: `"Linked" ${linked}` });
    await deliver([reader!.address], { listId: `"Unlinked" ${unlinked}` });

    // Assess
    const links = Object.fromEntries((await newsletters(reader!)).map((n: { name: string; listUnsubscribe: string[] }) => [n.name, n.listUnsubscribe]));
    expect(links).toEqual({ Linked: ['mailto:leave@bits.example?subject=unsubscribe', 'https://bits.example/u/new'], Unlinked: [] });
  });

  it('files every mail of the one newsletter that reaches the cap, however many arrive at once', async () => {
    const [reader] = await readers(1);
    for (let i = 1; i < LIMITS.newNewslettersPerReader.count; i++) await deliver([reader!.address], { listId: uniqueList() });
    const last = uniqueList();

    const messageIds = await Promise.all(Array.from({ length: 4 }, () => deliver([reader!.address], { listId: last })));

    const outcomes = (await Promise.all(messageIds.map(outcomesOf))).flat().map((o) => o.outcome);
    expect(outcomes).toEqual(Array(4).fill('filed'));
  });

  it('files a new newsletter for every reader of one mail at once', async () => {
    const audience = await readers(30);

    const messageId = await deliver(
      audience.map((r) => r.address),
      { listId: uniqueList() },
    );

    expect((await outcomesOf(messageId)).map((o) => o.outcome)).toEqual(Array(30).fill('filed'));
  });

  it('files a newsletter too large for a statement RDS Proxy leaves unpinned, whole, for every reader of one mail, and keeps no connection that sent it', async () => {
    // Prepare: an issue whose INSERT passes 16 KB, as most real newsletters' do.
    const audience = await readers(3);
    const html = `<p>${'All the week&rsquo;s news, and more. '.repeat(1_000)}<b>The end.</b></p>`;
    const before = await poolConnectionIds();

    // Act
    const messageId = await deliver(
      audience.map((r) => r.address),
      { listId: uniqueList(), html },
    );

    // Assess: each reader's copy went over a connection of its own, closed once it had.
    expect((await outcomesOf(messageId)).map((o) => o.outcome)).toEqual(Array(3).fill('filed'));
    const [summary] = body(await inbox(audience[0]!)).issues;
    const opened = body(await call(getIssue, audience[0]!, 'GET', `/me/inbox/${summary.id}`, { pathParameters: { issueId: String(summary.id) } }));
    expect(opened.html.length).toBeGreaterThan(30_000);
    expect(opened.html).toContain('<b>The end.</b>');
    const after = await poolConnectionIds();
    const closed = before.filter((id) => !after.includes(id));
    expect(closed).toHaveLength(3);
    const stillOpen = async () => (await db.query<RowDataPacket[]>('SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN (?)', [closed]))[0].length;
    await until(async () => (await stillOpen()) === 0, 10_000, 'the connections that sent it closed');
  });

  it('files nothing twice when SES delivers the same event again', async () => {
    const [reader] = await readers(1);
    const messageId = sesMessageId();
    await storeRawMail(messageId, newsletterMail({ to: reader!.address, listId: uniqueList() }));

    await receiveMail(sesEvent(messageId, [reader!.address]), lambdaContext());
    await receiveMail(sesEvent(messageId, [reader!.address]), lambdaContext());

    expect(body(await inbox(reader!)).issues).toHaveLength(1);
    expect(await outcomesOf(messageId)).toEqual([{ recipient: reader!.address, outcome: 'filed', reason: '' }]);
  });

  it('tells newsletters apart by List-Id with its sender domain, and by sender when there is none', async () => {
    const [reader, other] = await readers(2);
    const [first, second] = [uniqueList(), uniqueList()];

    await deliver([reader!.address], { listId: `"Weekly Bits" ${first}` });
    await deliver([reader!.address], { listId: first, subject: 'Issue 2' });
    await deliver([reader!.address], { listId: second });
    await deliver([reader!.address], { from: 'Solo <solo@writer.example>' });
    // A stranger claiming the same List-Id, and naming it, from a domain of their own.
    await deliver([other!.address], { from: 'Bits <news@impostor.example>', listId: `"Verify your account at impostor.example" ${first}` });

    const counts = (await newsletters(reader!)).map((n: { identity: string; issues: number; name: string }) => [n.identity, n.issues, n.name]);
    expect(counts.sort()).toEqual(
      [
        [first.slice(1, -1), 2, 'Weekly Bits'],
        [second.slice(1, -1), 1, 'Weekly Bits'],
        ['solo@writer.example', 1, 'Solo'],
      ].sort(),
    );
    const [impostor] = await newsletters(other!);
    expect(counts.map(([identity]: unknown[]) => identity)).toContain(impostor.identity);
    expect((await newsletters(reader!)).map((n: { id: number }) => n.id)).not.toContain(impostor.id);
  });

  it.each([
    ['from a domain without DMARC', {}, 'receipt-no-dmarc'],
    ['failing DMARC under a policy of none', { dmarcVerdict: { status: 'FAIL' }, dmarcPolicy: 'none' }, undefined],
  ] as const)('files a forged From %s apart from the authenticated newsletter, which it does not rename', async (_, receipt, fixture) => {
    // Prepare
    const [reader] = await readers(1);
    const listId = uniqueList();
    await deliver([reader!.address], { listId: `"Weekly Bits" ${listId}`, subject: 'Issue 1' });

    // Act
    await deliver(
      [reader!.address],
      { listId: `"Verify your account at impostor.example" ${listId}`, subject: 'Urgent' },
      receipt as Partial<SESReceipt>,
      fixture,
    );

    // Assess
    const shelf = (await newsletters(reader!)).map((n: { name: string; issues: number; authenticated: boolean }) => [n.name, n.issues, n.authenticated]);
    expect(shelf.sort()).toEqual(
      [
        ['Verify your account at impostor.example', 1, false],
        ['Weekly Bits', 1, true],
      ].sort(),
    );
  });

  it.each([
    ['a virus', { virusVerdict: { status: 'FAIL' } }, 'dropped', 'virus'],
    ['spam', { spamVerdict: { status: 'FAIL' } }, 'quarantined', 'spam-fail'],
    ['possible spam', { spamVerdict: { status: 'GRAY' } }, 'quarantined', 'spam-gray'],
    ['an unfinished spam check', { spamVerdict: { status: 'PROCESSING_FAILED' } }, 'quarantined', 'spam-processing_failed'],
    ['no spam check at all', { spamVerdict: { status: 'DISABLED' } }, 'quarantined', 'spam-disabled'],
    ['a DMARC failure whose policy is reject', { dmarcVerdict: { status: 'FAIL' }, dmarcPolicy: 'reject' }, 'quarantined', 'dmarc-reject'],
    ['a DMARC failure whose policy is quarantine', { dmarcVerdict: { status: 'FAIL' }, dmarcPolicy: 'quarantine' }, 'quarantined', 'dmarc-quarantine'],
  ] as const)('keeps mail with %s out of the inbox', async (_, receipt, outcome, reason) => {
    const [reader] = await readers(1);

    const messageId = await deliver([reader!.address], { listId: uniqueList() }, receipt as Partial<SESReceipt>);

    expect(body(await inbox(reader!)).issues).toEqual([]);
    expect(await outcomesOf(messageId)).toEqual([{ recipient: reader!.address, outcome, reason }]);
  });

  it('files mail whose DMARC failed under a policy of none', async () => {
    const [reader] = await readers(1);

    await deliver([reader!.address], { listId: uniqueList() }, { dmarcVerdict: { status: 'FAIL' }, dmarcPolicy: 'none' });

    expect(body(await inbox(reader!)).issues).toHaveLength(1);
  });

  it('drops and counts mail to an unknown or rotated address, and still files it for the known reader', async () => {
    // Prepare
    const [reader, rotating] = await readers(2);
    const oldAddress = rotating!.address;
    const rotated = body(await call(rotateInboxAddress, rotating!, 'POST', '/me/inbox-address')).address;
    const stranger = `aaaaaaaaaaaaaaaaaaaa@${process.env.INBOUND_DOMAIN}`;

    // Act
    const messageId = await deliver([reader!.address, oldAddress, stranger], { listId: uniqueList() });

    // Assess
    expect(rotated).not.toBe(oldAddress);
    expect(body(await call(getInboxAddress, rotating!, 'GET', '/me/inbox-address')).address).toBe(rotated);
    expect(body(await inbox(rotating!)).issues).toEqual([]);
    expect(body(await inbox(reader!)).issues).toHaveLength(1);
    expect(await outcomesOf(messageId)).toEqual(
      [
        { recipient: reader!.address, outcome: 'filed', reason: '' },
        { recipient: oldAddress, outcome: 'dropped', reason: 'unknown-recipient' },
        { recipient: stranger, outcome: 'dropped', reason: 'unknown-recipient' },
      ].sort((a, b) => a.recipient.localeCompare(b.recipient)),
    );
  });

  it('stops filing a muted newsletter for that reader only, and files it again once unmuted', async () => {
    const [muter, other] = await readers(2);
    const listId = uniqueList();
    await deliver([muter!.address, other!.address], { listId });
    const [newsletter] = await newsletters(muter!);
    const params = { pathParameters: { id: String(newsletter.id) } };

    const muted = await call(muteNewsletter, muter!, 'POST', `/me/newsletters/${newsletter.id}/mute`, params);
    const whileMuted = await deliver([muter!.address, other!.address], { listId });
    const unmuted = await call(unmuteNewsletter, muter!, 'DELETE', `/me/newsletters/${newsletter.id}/mute`, params);
    await deliver([muter!.address], { listId });

    expect(body(muted)).toEqual({ id: newsletter.id, muted: true });
    expect(body(unmuted)).toEqual({ id: newsletter.id, muted: false });
    expect((await outcomesOf(whileMuted)).map((o) => o.outcome).sort()).toEqual(['filed', 'muted']);
    expect(body(await inbox(muter!)).issues).toHaveLength(2);
    expect(body(await inbox(other!)).issues).toHaveLength(2);
  });

  it("answers 404 for another reader's issue or newsletter, and 400 for bad parameters", async () => {
    const [owner, intruder] = await readers(2);
    await deliver([owner!.address], { listId: uniqueList() });
    const [newsletter] = await newsletters(owner!);
    const [issue] = body(await inbox(owner!)).issues;

    const results = [
      await call(getIssue, intruder!, 'GET', `/me/inbox/${issue.id}`, { pathParameters: { issueId: String(issue.id) } }),
      await inbox(intruder!, `newsletter=${newsletter.id}`),
      await call(muteNewsletter, intruder!, 'POST', `/me/newsletters/${newsletter.id}/mute`, { pathParameters: { id: String(newsletter.id) } }),
    ];
    const invalid = [await inbox(owner!, 'page=0'), await inbox(owner!, 'size=51'), await inbox(owner!, 'newsletter=abc'), await inbox(owner!, 'sort=date')];

    expect(results.map((r) => [r.statusCode, body(r).error.code])).toEqual(Array(3).fill([404, 'NOT_FOUND']));
    expect(invalid.map((r) => [r.statusCode, body(r).error.code])).toEqual(Array(4).fill([400, 'VALIDATION_FAILED']));
    expect(body(await call(getIssue, owner!, 'GET', `/me/inbox/${issue.id}`, { pathParameters: { issueId: String(issue.id) } })).read).toBe(true);
  });

  it('files the good records of an event, then fails it for a malformed one so it is retried', async () => {
    const [reader] = await readers(1);
    const messageId = sesMessageId();
    await storeRawMail(messageId, newsletterMail({ to: reader!.address, listId: uniqueList() }));
    const event = sesEvent(messageId, [reader!.address]);
    const broken = structuredClone(event.Records[0]!);
    (broken.ses.receipt as { recipients: unknown }).recipients = 'not-a-list';

    const receiving = receiveMail({ Records: [broken, ...event.Records] }, lambdaContext());

    await expect(receiving).rejects.toThrow('1 of 2 SES records were malformed');
    expect(body(await inbox(reader!)).issues).toHaveLength(1);
  });

  it('records a raw message that is missing from S3 as rejected', async () => {
    const [reader] = await readers(1);
    const messageId = sesMessageId();

    await receiveMail(sesEvent(messageId, [reader!.address]), lambdaContext());

    expect(await outcomesOf(messageId)).toEqual([{ recipient: reader!.address, outcome: 'rejected', reason: 'raw-message-missing' }]);
  });

  describe('rates', () => {
    it("quarantines a reader's mail past what one sender may send them, naming that rate, and still files their other mail and the sender's mail to others", async () => {
      // Prepare
      const [reader, other] = await readers(2);
      const domain = senderDomain();
      await exhaust(mailRateKeys(reader!.id, { domain, authenticated: true }).readerSender, LIMITS.mailPerReaderFromSender);

      // Act
      const flood = await deliver([reader!.address, other!.address], { from: `Flood <news@${domain}>`, listId: uniqueList(), subject: 'One too many' });
      const fromOthers = await deliver([reader!.address], { listId: uniqueList() });

      // Assess
      expect(await outcomesOf(flood)).toEqual(
        [
          { recipient: reader!.address, outcome: 'quarantined', reason: 'rate-reader-sender' },
          { recipient: other!.address, outcome: 'filed', reason: '' },
        ].sort((a, b) => a.recipient.localeCompare(b.recipient)),
      );
      expect(await outcomesOf(fromOthers)).toEqual([{ recipient: reader!.address, outcome: 'filed', reason: '' }]);
      expect((await quarantine(reader!)).mail).toMatchObject([
        { reason: 'rate-reader-sender', sender: `Flood <news@${domain}>`, subject: 'One too many', authenticated: true },
      ]);
    });

    it("quarantines a reader's mail past their own rate, from any sender, and files other readers' copies", async () => {
      // Prepare
      const [reader, other] = await readers(2);
      await exhaust(mailRateKeys(reader!.id, { domain: 'any.example', authenticated: true }).reader, LIMITS.mailPerReader);

      // Act
      const messageId = await deliver([reader!.address, other!.address], { from: `Someone <news@${senderDomain()}>`, listId: uniqueList() });

      // Assess
      expect(await outcomesOf(messageId)).toEqual(
        [
          { recipient: reader!.address, outcome: 'quarantined', reason: 'rate-reader' },
          { recipient: other!.address, outcome: 'filed', reason: '' },
        ].sort((a, b) => a.recipient.localeCompare(b.recipient)),
      );
      expect(body(await inbox(reader!)).issues).toEqual([]);
      expect(body(await inbox(other!)).issues).toHaveLength(1);
    });

    it("quarantines a sender domain's mail to every reader past its rate, and counts a forged From at that domain apart", async () => {
      // Prepare
      const [first, second] = await readers(2);
      const domain = senderDomain();
      await exhaust(mailRateKeys(first!.id, { domain, authenticated: true }).senderDomain, LIMITS.mailPerSenderDomain);

      // Act
      const authentic = await deliver([first!.address, second!.address], { from: `News <news@${domain}>`, listId: uniqueList() });
      const forged = await deliver([first!.address], { from: `News <news@${domain}>`, listId: uniqueList() }, {}, 'receipt-no-dmarc');

      // Assess
      expect((await outcomesOf(authentic)).map((o) => [o.outcome, o.reason])).toEqual(Array(2).fill(['quarantined', 'rate-sender-domain']));
      expect(await outcomesOf(forged)).toEqual([{ recipient: first!.address, outcome: 'filed', reason: '' }]);
    });

    it('files rate-quarantined mail when its reader releases it, past the rate, once', async () => {
      // Prepare
      const [reader] = await readers(1);
      const domain = senderDomain();
      const keys = mailRateKeys(reader!.id, { domain, authenticated: true });
      await exhaust(keys.readerSender, LIMITS.mailPerReaderFromSender);
      await deliver([reader!.address], { from: `Flood <news@${domain}>`, listId: `"Wanted after all" ${uniqueList()}`, subject: 'Held' });
      const [held] = (await quarantine(reader!)).mail;

      // Act
      const released = body(await release(reader!, held.id));
      const again = body(await release(reader!, held.id));

      // Assess
      expect(held).toMatchObject({ reason: 'rate-reader-sender', subject: 'Held' });
      expect([released, again]).toEqual([
        { id: held.id, outcome: 'filed' },
        { id: held.id, outcome: 'duplicate' },
      ]);
      expect(body(await inbox(reader!)).issues.map((i: { subject: string }) => i.subject)).toEqual(['Held']);
      expect(await quarantine(reader!)).toEqual({ mail: [], next: null });
    });
  });
});
