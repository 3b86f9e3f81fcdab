import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { createTransport } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functions } from '../../functions/table';
import { LIMITS } from '../../shared/limits/limits';
import { createSignedRequester, serviceLocation } from '../../shared/platform/clients/aws-http';
import { demoAccounts } from '../../infra/twin/seed';
import { TWIN_SECRETS } from '../../infra/twin/deployment';
import type { Middleware } from 'openapi-fetch';
import { sessionCookie, signedIn, surgeClient } from '../../infra/client/client';
import { FIRE_PATH } from '../../infra/twin/routes';
import { startTwinProcess, type TwinProcess } from '../../infra/twin/twin-process';
import { until } from '../../shared/platform/wait';

/**
 * `npm start -- --bundles --aws-stores --edge` as a user runs it: every function of the table
 * served as the bundle `cdk deploy` uploads, in a thread whose environment is only its row's,
 * against TLS-only stores with AUTH whose passwords the functions look up in Secrets Manager,
 * behind the prod stack's CloudFront and WAF (the edge forwards only what its policies name).
 */
describe('the twin serving the deployed bundles against AWS-like stores, behind the production edge', () => {
  let twin: TwinProcess;
  /** Each function of the table, once something below has seen it do its job. */
  const exercised = new Set<string>();

  /** An answer under 400 marks the function of the table whose route gave it as exercised. */
  const markExercised: Middleware = {
    onResponse({ request, schemaPath, response }) {
      const spec = functions.find(({ trigger }) => trigger.kind === 'http' && trigger.method === request.method && trigger.path === schemaPath);
      if (spec && response.status < 400) exercised.add(spec.id);
    },
  };
  /** The twin's API, as the holder of this session calls it; without one, as anyone. */
  const as = (cookie?: string) => {
    const client = surgeClient(twin.url, cookie ? { cookie } : {});
    client.use(markExercised);
    return client;
  };
  const signIn = async (role: 'user' | 'admin') => {
    const { client } = await signedIn(twin.url, demoAccounts.find((a) => a.role === role)!);
    exercised.add('create-session');
    client.use(markExercised);
    return client;
  };
  /** Fires a schedule or the deploy trigger through the twin's own endpoint (not a route of the API), as EventBridge or CloudFormation would. */
  async function fire(functionId: string): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${twin.url}${FIRE_PATH.replace('{functionId}', functionId)}`, { method: 'POST', signal: AbortSignal.timeout(60_000) });
    if (res.status < 400) exercised.add(functionId);
    return { status: res.status, body: await res.json() };
  }

  /** Secrets Manager's stand-in in the emulator, called the way an operator's rotation would. */
  async function putSecret(secretId: string, value: string): Promise<void> {
    const send = createSignedRequester({
      service: 'secretsmanager',
      region: 'us-east-1',
      credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }),
      uriEscapePath: true,
    });
    const res = await send(serviceLocation('secretsmanager', 'us-east-1', twin.emulatorUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.PutSecretValue' },
      body: JSON.stringify({ SecretId: secretId, SecretString: value }),
    });
    res.resume();
    expect(res.statusCode).toBe(200);
  }

  const secretLookups = async () =>
    ((await (await fetch(`${twin.emulatorUrl}/__twin/stats`)).json()) as { calls: Record<string, number> }).calls['secretsmanager.GetSecretValue'] ?? 0;

  const stateDir = `.local/test-bundles-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    twin = await startTwinProcess({
      stateDir,
      database: 'surge_bundles',
      args: ['--bundles', '--aws-stores', '--edge'],
      ownServices: true,
      env: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
    });
  });
  afterAll(async () => {
    await twin?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('ran the migrations and made the first admin through the deploy trigger, and runs it again on demand', async () => {
    // Act
    const fired = await fire('migrate-database');

    // Assess: the schema and the first admin (from the secret the trigger looked up) were there
    // before anything else ran, so nothing is left to apply or create.
    expect(fired).toMatchObject({ status: 200, body: { result: { applied: [], firstAdmin: 'exists' } } });
  });

  it('stores are TLS-only with AUTH, and the twin runs in a process that trusts their CA', async () => {
    // Act
    const plain = new Redis(twin.admin.redisUrl.replace('rediss:', 'redis:'), { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    plain.on('error', () => undefined);
    const plainPing = plain.connect().then(() => plain.ping());
    const unauthenticated = new Redis(twin.admin.redisUrl.replace(/\/\/:[^@]+@/, '//'), {
      tls: { ca: twin.admin.ca! },
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    unauthenticated.on('error', () => undefined);

    // Assess
    await expect(plainPing).rejects.toThrow();
    await expect(unauthenticated.connect().then(() => unauthenticated.ping())).rejects.toThrow(/NOAUTH|WRONGPASS|closed/);
    await expect(createConnection({ uri: twin.admin.databaseUrl })).rejects.toThrow();
    plain.disconnect();
    unauthenticated.disconnect();
  });

  it('every HTTP, queue, SES, schedule and deploy function works as its bundle', async () => {
    // Prepare
    const admin = await signIn('admin');
    const user = await signIn('user');
    const anyone = as();
    const itemId = `bundle-${randomBytes(3).toString('hex')}`;
    const dealId = `bundle-${randomBytes(3).toString('hex')}`;

    // Act and assess, one function after another
    expect((await anyone.GET('/health')).data).toEqual({ status: 'ok', down: [] });
    // The API's own description, built beside each serving bundle as cdk deploy builds it.
    expect((await anyone.GET('/openapi.json')).data).toMatchObject({
      openapi: expect.stringMatching(/^3\.1\./),
      paths: expect.objectContaining({ '/items/{itemId}/orders': expect.any(Object) }),
    });
    expect((await anyone.GET('/docs', { parseAs: 'text' })).data).toMatch(/^<!doctype html>/i);
    expect((await user.GET('/me')).data).toMatchObject({ role: 'user' });
    const newcomer = `bundle-${randomBytes(3).toString('hex')}@surge.test`;
    const signedUp = await anyone.POST('/users', { body: { email: newcomer, password: 'a bundled passphrase' } });
    expect(signedUp).toMatchObject({ response: { status: 201 }, data: { user: { email: newcomer, role: 'user' } } });
    expect((await as(sessionCookie(signedUp.response)).GET('/me')).data).toMatchObject({ email: newcomer });

    expect((await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 5, perUserLimit: 1 } })).response.status).toBeLessThan(
      300,
    );
    expect((await anyone.GET('/items/{itemId}', { params: { path: { itemId } } })).data).toMatchObject({ remaining: 5 });
    const order = await user.POST('/items/{itemId}/orders', {
      params: { path: { itemId }, header: { 'idempotency-key': randomBytes(8).toString('hex') } },
      body: { quantity: 1 },
    });
    expect(order).toMatchObject({ response: { status: 202 }, data: { status: 'pending' } });
    const { orderId } = order.data!;
    // The writer runs in the consumers' process, as its bundle too: a confirmed order is its work.
    await until(async () => (await user.GET('/orders/{orderId}', { params: { path: { orderId } } })).data?.status === 'confirmed', 60_000, 'order confirmed');
    exercised.add('write-reservations');

    // A sale behind a waiting room, open already: join, wait for the turn, claim the pass, order with it.
    const roomItemId = `bundle-room-${randomBytes(3).toString('hex')}`;
    expect(
      (await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId: roomItemId } }, body: { quantity: 5, perUserLimit: 1 } })).response.status,
    ).toBeLessThan(300);
    const room = { opensAt: new Date(Date.now() - 1_000).toISOString(), admitPerSecond: 50, passSeconds: 120, graceSeconds: 60 };
    expect((await admin.PUT('/items/{itemId}/waiting-room', { params: { path: { itemId: roomItemId } }, body: room })).response.status).toBe(200);
    expect((await user.POST('/items/{itemId}/queue', { params: { path: { itemId: roomItemId } } })).response.status).toBe(201);
    await until(
      async () => (await user.GET('/items/{itemId}/queue/me', { params: { path: { itemId: roomItemId } } })).data?.admitted === true,
      60_000,
      'admitted',
    );
    const pass = (await user.POST('/items/{itemId}/queue/pass', { params: { path: { itemId: roomItemId } } })).data!;
    const passed = await user.POST('/items/{itemId}/orders', {
      params: { path: { itemId: roomItemId }, header: { 'idempotency-key': randomBytes(8).toString('hex'), 'waiting-room-pass': pass.token } },
      body: { quantity: 1 },
    });
    expect(passed.response.status).toBe(202);
    expect((await anyone.GET('/wait/{itemId}', { params: { path: { itemId: roomItemId } }, parseAs: 'text' })).data).toMatch(/^<!doctype html>/i);
    expect((await admin.DELETE('/items/{itemId}/waiting-room', { params: { path: { itemId: roomItemId } } })).response.status).toBe(204);

    const now = Date.now();
    const deal = { title: 'Bundled', opensAt: new Date(now - 60_000).toISOString(), closesAt: new Date(now + 3_600_000).toISOString(), limit: 3 };
    expect((await admin.PUT('/deals/{dealId}', { params: { path: { dealId } }, body: deal })).response.status).toBeLessThan(300);
    expect((await anyone.GET('/deals/{dealId}', { params: { path: { dealId } } })).data).toMatchObject({ remaining: 3 });
    expect((await user.POST('/deals/{dealId}/coupons', { params: { path: { dealId } } })).response.status).toBe(201);
    expect((await user.GET('/me/coupons')).response.status).toBe(200);
    expect((await admin.POST('/admin/audit/items/{itemId}', { params: { path: { itemId } }, body: { accepted: [orderId] } })).data).toMatchObject({
      rows: 1,
      lost: 0,
    });
    expect((await admin.POST('/admin/audit/deals/{dealId}', { params: { path: { dealId } }, body: { accepted: [] } })).response.status).toBe(200);
    const prepared = (await admin.POST('/admin/load-tests/buyers', { body: { count: 2 } })).data!;
    expect(prepared.buyers).toHaveLength(2);
    expect((await as(prepared.buyers[0]!.cookie).GET('/me')).response.status).toBe(200);

    const created = await admin.POST('/programs', { body: { title: 'Bundled Rust', careerTag: 'backend', type: 'course' } });
    expect(created.response.status).toBe(201);
    expect(
      (
        await admin.PUT('/programs/{id}', {
          params: { path: { id: created.data!.id } },
          body: { title: 'Bundled Rust 2', careerTag: 'backend', type: 'course' },
        })
      ).response.status,
    ).toBe(200);
    const page = await anyone.GET('/programs', { params: { query: { careerTag: 'backend', types: ['course'], page: 1, size: 50 } } });
    expect(page.data!.items.map((p) => p.title)).toContain('Bundled Rust 2');

    const first = await user.GET('/me/inbox-address');
    const rotated = (await user.POST('/me/inbox-address')).data!;
    expect(rotated.address).not.toEqual(first.data!.address);
    const subject = `Bundled issue ${now}`;
    await createTransport({ url: twin.smtpUrl, ignoreTLS: true }).sendMail({
      from: 'Bundled Weekly <news@bundled.example>',
      to: rotated.address,
      subject,
      html: '<p>Hello from a bundle</p>',
      list: { id: 'bundled.weekly.example' },
    });
    await until(async () => ((await user.GET('/me/newsletters')).data?.newsletters.length ?? 0) > 0, 60_000, 'newsletter filed');
    exercised.add('receive-mail');
    const inbox = (await user.GET('/me/inbox', { params: { query: { page: 1 } } })).data!;
    const issue = inbox.issues.find((i) => i.subject === subject)!;
    expect((await user.GET('/me/inbox/{issueId}', { params: { path: { issueId: issue.id } } })).data).toMatchObject({ subject });
    // The reader's feeds, opened by their token as a feed reader opens them; a rotation retires the old token.
    const feedToken = (url: string) => new URL(url).pathname.split('/')[2]!;
    const token = feedToken((await user.GET('/me/feeds')).data!.all.atom);
    const atom = await anyone.GET('/feeds/{token}/atom/{feed}', { params: { path: { token, feed: 'all' } }, parseAs: 'text' });
    expect(atom.data).toContain(subject);
    const json = (await anyone.GET('/feeds/{token}/json/{feed}', { params: { path: { token, feed: 'all' } } })).data!;
    expect(json.items.map((item) => item.title)).toContain(subject);
    expect((await anyone.GET('/feeds/{token}/issues/{issueId}', { params: { path: { token, issueId: issue.id } }, parseAs: 'text' })).data).toContain(
      'Hello from a bundle',
    );
    const newToken = feedToken((await user.POST('/me/feeds')).data!.all.atom);
    expect(newToken).not.toBe(token);
    expect((await anyone.GET('/feeds/{token}/atom/{feed}', { params: { path: { token, feed: 'all' } }, parseAs: 'text' })).response.status).toBe(404);
    expect((await user.POST('/me/newsletters/{id}/mute', { params: { path: { id: issue.newsletterId } } })).response.status).toBeLessThan(300);
    expect((await user.DELETE('/me/newsletters/{id}/mute', { params: { path: { id: issue.newsletterId } } })).response.status).toBeLessThan(300);
    // The reader's newsletters past the day's cap are quarantined: one of them is released, as its bundle parses it.
    const smtp = createTransport({ url: twin.smtpUrl, ignoreTLS: true });
    for (let i = 0; i < LIMITS.newNewslettersPerReader.count; i++) {
      await smtp.sendMail({
        from: 'Many <news@bundled.example>',
        to: rotated.address,
        subject: `Many ${i}`,
        text: 'Hello',
        list: { id: `many-${i}-${now}.bundled.example` },
      });
    }
    await until(async () => ((await user.GET('/me/quarantine')).data?.mail.length ?? 0) > 0, 60_000, 'mail quarantined');
    const [held] = (await user.GET('/me/quarantine')).data!.mail;
    expect((await user.POST('/me/quarantine/{id}/release', { params: { path: { id: held!.id } } })).data).toEqual({ id: held!.id, outcome: 'filed' });

    expect((await fire('reconcile-reservations')).body).toMatchObject({ result: { drifted: 0 } });
    // The rotation above revoked its token itself: the sweep finds none left to revoke.
    expect((await fire('revoke-feed-tokens')).body).toMatchObject({ result: { revoked: 0 } });
    await fire('migrate-database');

    const other = await signIn('user');
    expect((await user.DELETE('/sessions/current')).response.status).toBe(204);
    expect((await other.DELETE('/sessions')).response.status).toBe(204);
    expect((await other.GET('/me')).response.status).toBe(401);

    expect([...exercised].sort()).toEqual(functions.map((f) => f.id).sort());
  });

  it('passes the smoke run a user would make against it (npm run smoke)', async () => {
    // Act
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/ops/smoke.ts', twin.url], { env: process.env });

    // Assess
    const report = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(report.steps.filter((s: { ok: boolean }) => !s.ok)).toEqual([]);
    expect(report).toMatchObject({ ok: true, failed: 0, passed: 9 });
  });

  it('after a rotation of both passwords, looks each secret up again once and carries on', async () => {
    // Prepare: a signed-in session, so the database and Redis both serve the request after the rotation.
    const user = await signIn('user');
    const lookupsBefore = await secretLookups();
    const databasePassword = randomBytes(16).toString('hex');
    const redisPassword = randomBytes(16).toString('hex');

    // Act: rotate as Secrets Manager's rotation would, then drop every connection made with the old passwords.
    const root = await createConnection({ uri: twin.admin.databaseUrl, ssl: { ca: twin.admin.ca! } });
    await root.query("ALTER USER 'surge'@'%' IDENTIFIED BY ?", [databasePassword]);
    await putSecret(TWIN_SECRETS.database, JSON.stringify({ username: 'surge', password: databasePassword }));
    const [sessions] = (await root.query("SELECT id FROM information_schema.processlist WHERE user = 'surge'")) as unknown as [{ id: number }[]];
    for (const { id } of sessions) await root.query('KILL CONNECTION ?', [id]).catch(() => undefined);
    await root.end();
    const redis = new Redis(twin.admin.redisUrl, { tls: { ca: twin.admin.ca! } });
    await redis.config('SET', 'requirepass', redisPassword);
    await putSecret(TWIN_SECRETS.redisAuth, redisPassword);
    await redis.call('CLIENT', 'KILL', 'TYPE', 'normal');
    redis.disconnect();

    // Assess: a client may be told to retry (503) while its connection comes back, never anything else.
    const statuses: number[] = [];
    await until(
      async () => {
        const [me, item] = await Promise.all([user.GET('/me'), as().GET('/items/{itemId}', { params: { path: { itemId: 'demo-item' } } })]);
        statuses.push(me.response.status, item.response.status);
        return me.response.status === 200 && item.response.status === 200;
      },
      15_000,
      'requests served with the rotated passwords',
    );
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    const lookupsAfterRotation = (await secretLookups()) - lookupsBefore;
    for (let i = 0; i < 20; i++) expect((await user.GET('/me')).response.status).toBe(200);
    // Each instance whose connection was refused looked up again (every function's instance had a
    // Redis connection to lose), at most once per secret; requests after that look nothing up. An
    // idle instance's own reconnect may still come after them (its backoff is its own), so the
    // twenty requests are held to adding fewer lookups than there are of them, and the whole to once per secret and instance.
    const lookupsAfterRequests = (await secretLookups()) - lookupsBefore;
    expect(lookupsAfterRotation).toBeGreaterThanOrEqual(2);
    expect(lookupsAfterRequests).toBeLessThanOrEqual(2 * functions.length);
    expect(lookupsAfterRequests - lookupsAfterRotation).toBeLessThan(20);
  });
});
