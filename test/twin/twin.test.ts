import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { parseFeed } from '@rowanmanning/feed-parser';
import { createConnection } from 'mysql2/promise';
import { createTransport } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buckets, inboundMail } from '../../functions/table';
import { demoAccounts } from '../../infra/twin/seed';
import { startTwin, type Twin } from '../../infra/twin/twin';
import { sessionCookie, surgeClient } from '../../infra/client/client';
import { until } from '../../shared/platform/wait';

describe('the local twin over HTTP', () => {
  let twin: Twin;

  /** Signs the demo user in over HTTP; returns the answer and a client signed in with the cookie it set. */
  async function signInDemo() {
    const demo = demoAccounts.find((a) => a.role === 'user')!;
    const login = await surgeClient(twin.url).POST('/sessions', { body: { email: demo.email, password: demo.password } });
    return { demo, login, user: surgeClient(twin.url, { cookie: sessionCookie(login.response)! }) };
  }

  beforeAll(async () => {
    twin = await startTwin({ port: 0, smtpPort: 0, stateDir: '.local/test', database: 'surge_test', queuePrefix: 'twin-test-' });
  });
  afterAll(() => twin.stop());

  it('reports every dependency healthy', async () => {
    const health = await surgeClient(twin.url).GET('/health');

    expect(health.response.status).toBe(200);
    expect(health.data).toEqual({ status: 'ok', down: [] });
  });

  it('signs the demo user in, serves /me, and signs out', async () => {
    // Act
    const { demo, login, user } = await signInDemo();
    const me = await user.GET('/me');
    const logout = await user.DELETE('/sessions/current');
    const after = await user.GET('/me');

    // Assess
    expect(login.response.status).toBe(201);
    expect(me.response.status).toBe(200);
    expect(me.data).toMatchObject({ email: demo.email, role: 'user' });
    expect(logout.response.status).toBe(204);
    expect(after.response.status).toBe(401);
    expect(after.error).toEqual({ error: { code: 'UNAUTHENTICATED', message: 'Session expired or unknown' } });
  });

  it('answers an unknown route with 404 JSON', async () => {
    const res = await fetch(`${twin.url}/no/such/route`);

    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'Not Found' });
  });

  it("files a newsletter sent over SMTP to the demo user's address into their inbox", async () => {
    // Prepare
    const { user } = await signInDemo();
    const { address } = (await user.GET('/me/inbox-address')).data!;
    const subject = `Over SMTP ${Date.now()}`;

    // Act
    const smtp = createTransport({ url: twin.smtpUrl, ignoreTLS: true });
    const sent = await smtp.sendMail({
      from: 'Twin Weekly <weekly@twin.example>',
      to: address,
      subject,
      text: 'Hello over SMTP',
      list: { id: 'twin-weekly.twin.example' },
    });

    // Assess
    expect(sent.response).toMatch(/^250 OK queued as [a-z0-9]{40}$/);
    const filed = async () => {
      const inbox = (await user.GET('/me/inbox')).data!;
      return inbox.issues.filter((i) => i.subject === subject).length;
    };
    await until(async () => (await filed()) > 0, 60_000, 'the issue in the inbox');
    expect(await filed()).toBe(1);
  });

  it("serves the demo user's feed at the path npm start prints: a feed parser finds the issue mailed to them", async () => {
    // Prepare
    const { user } = await signInDemo();
    const { address } = (await user.GET('/me/inbox-address')).data!;
    const subject = `In the feed ${Date.now()}`;
    const smtp = createTransport({ url: twin.smtpUrl, ignoreTLS: true });

    // Act
    await smtp.sendMail({
      from: 'Twin Weekly <weekly@twin.example>',
      to: address,
      subject,
      html: '<p>Hello, feed</p>',
      list: { id: 'twin-weekly.twin.example' },
    });
    const feed = async () => parseFeed(await (await fetch(`${twin.url}${twin.demoFeedPath}`)).text());

    // Assess: filed in the background, as SES invokes the function
    await until(async () => (await feed()).items.some((i) => i.title === subject), 60_000, 'the issue in the feed');
    const item = (await feed()).items.find((i) => i.title === subject)!;
    expect(item.authors[0]!.name).toBe('Twin Weekly');
    expect(item.content).toContain('<p>Hello, feed</p>');
    expect(item.url).toBe(`${twin.url}${twin.demoFeedPath!.replace(/\/atom\/all$/, '')}/issues/${item.id!.split(':').at(-1)}`);
  });

  it('stores a 12 MB newsletter sent over SMTP, as SES takes up to 40 MB, and records it too-large', async () => {
    // Prepare: over the function's 10 MiB, well under SES's 40 MB
    const { user } = await signInDemo();
    const { address } = (await user.GET('/me/inbox-address')).data!;
    const line = `${'Twelve megabytes of newsletter '.repeat(2)}\n`;
    const text = line.repeat(Math.ceil((12 * 1024 * 1024) / line.length));

    // Act
    const smtp = createTransport({ url: twin.smtpUrl, ignoreTLS: true });
    const sent = await smtp.sendMail({ from: 'Big Weekly <big@twin.example>', to: address, subject: 'Twelve megabytes', text });

    // Assess
    expect(sent.response).toMatch(/^250 OK queued as [a-z0-9]{40}$/);
    const messageId = /queued as ([a-z0-9]+)/.exec(sent.response)![1]!;
    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: twin.emulatorUrl,
      forcePathStyle: true,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const stored = await s3.send(new HeadObjectCommand({ Bucket: buckets[inboundMail.bucket].name, Key: `${inboundMail.prefix}${messageId}` }));
    expect(stored.ContentLength).toBeGreaterThan(12 * 1024 * 1024);
    const db = await createConnection({ uri: twin.databaseUrl });
    try {
      const outcomes = async () =>
        (await db.query('SELECT recipient, outcome, reason FROM mail_outcomes WHERE ses_message_id = ?', [messageId]))[0] as unknown[];
      await until(async () => (await outcomes()).length > 0, 60_000, 'the outcome recorded');
      expect(await outcomes()).toEqual([{ recipient: address, outcome: 'rejected', reason: 'too-large' }]);
    } finally {
      await db.end();
    }
  });
});
