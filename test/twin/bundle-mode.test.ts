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
import { apiCall, type ApiCallOptions } from '../../infra/twin/api-client';
import { startTwinProcess, type TwinProcess } from '../../infra/twin/twin-process';
import { until } from '../../shared/platform/wait';

/**
 * `npm start -- --bundles --aws-stores` as a user runs it: every function of the table served as
 * the bundle `cdk deploy` uploads, in a thread whose environment is only its row's, against
 * TLS-only stores with AUTH whose passwords the functions look up in Secrets Manager.
 */
describe('the twin serving the deployed bundles against AWS-like stores', () => {
  let twin: TwinProcess;
  /** Each function of the table, once something below has seen it do its job. */
  const exercised = new Set<string>();

  /** Calls the twin's API; an answer under 400 marks the function that gave it as exercised. */
  async function call(functionId: string, method: string, path: string, options: ApiCallOptions = {}) {
    const answer = await apiCall(twin.url, method, path, options);
    if (answer.status < 400) exercised.add(functionId);
    return answer;
  }

  const signIn = async (role: 'user' | 'admin') => {
    const account = demoAccounts.find((a) => a.role === role)!;
    const res = await call('create-session', 'POST', '/sessions', { body: { email: account.email, password: account.password } });
    expect(res.status).toBe(201);
    return res.cookie!;
  };

  /** Secrets Manager's stand-in in the emulator, called the way an operator's rotation would. */
  async function putSecret(secretId: string, value: string): Promise<void> {
    const send = createSignedRequester({ service: 'secretsmanager', region: 'us-east-1', credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }), uriEscapePath: true });
    const res = await send(serviceLocation('secretsmanager', 'us-east-1', twin.emulatorUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.PutSecretValue' },
      body: JSON.stringify({ SecretId: secretId, SecretString: value }),
    });
    res.resume();
    expect(res.statusCode).toBe(200);
  }

  const secretLookups = async () => ((await (await fetch(`${twin.emulatorUrl}/__twin/stats`)).json()) as { calls: Record<string, number> }).calls['secretsmanager.GetSecretValue'] ?? 0;

  const stateDir = `.local/test-bundles-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    twin = await startTwinProcess({
      stateDir,
      database: 'surge_bundles',
      args: ['--bundles', '--aws-stores'],
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
    const fired = await call('migrate-database', 'POST', '/__twin/functions/migrate-database/invoke');

    // Assess: the schema and the first admin (from the secret the trigger looked up) were there
    // before anything else ran, so nothing is left to apply or create.
    expect(fired).toMatchObject({ status: 200, body: { result: { applied: [], firstAdmin: 'exists' } } });
  });

  it('stores are TLS-only with AUTH, and the twin runs in a process that trusts their CA', async () => {
    // Act
    const plain = new Redis(twin.admin.redisUrl.replace('rediss:', 'redis:'), { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    plain.on('error', () => undefined);
    const plainPing = plain.connect().then(() => plain.ping());
    const unauthenticated = new Redis(twin.admin.redisUrl.replace(/\/\/:[^@]+@/, '//'), { tls: { ca: twin.admin.ca! }, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
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
    const itemId = `bundle-${randomBytes(3).toString('hex')}`;
    const dealId = `bundle-${randomBytes(3).toString('hex')}`;

    // Act and assess, one function after another
    expect((await call('health', 'GET', '/health')).body).toEqual({ status: 'ok', down: [] });
    // The API's own description, built beside each serving bundle as cdk deploy builds it.
    expect((await call('get-api-document', 'GET', '/openapi.json')).body).toMatchObject({ openapi: expect.stringMatching(/^3\.1\./), paths: expect.objectContaining({ '/items/{itemId}/orders': expect.any(Object) }) });
    expect((await call('get-api-docs', 'GET', '/docs')).body).toMatch(/^<!doctype html>/i);
    expect((await call('get-me', 'GET', '/me', { cookie: user })).body).toMatchObject({ role: 'user' });
    const newcomer = `bundle-${randomBytes(3).toString('hex')}@surge.test`;
    const signedUp = await call('create-user', 'POST', '/users', { body: { email: newcomer, password: 'a bundled passphrase' } });
    expect(signedUp).toMatchObject({ status: 201, body: { user: { email: newcomer, role: 'user' } } });
    expect((await call('get-me', 'GET', '/me', { cookie: signedUp.cookie })).body).toMatchObject({ email: newcomer });

    expect((await call('put-item-stock', 'PUT', `/items/${itemId}/stock`, { cookie: admin, body: { quantity: 5, perUserLimit: 1 } })).status).toBeLessThan(300);
    expect((await call('get-item', 'GET', `/items/${itemId}`)).body).toMatchObject({ remaining: 5 });
    const order = await call('create-order', 'POST', `/items/${itemId}/orders`, { cookie: user, body: { quantity: 1 }, headers: { 'idempotency-key': randomBytes(8).toString('hex') } });
    expect(order).toMatchObject({ status: 202, body: { status: 'pending' } });
    // The writer runs in the consumers' process, as its bundle too: a confirmed order is its work.
    await until(async () => (await call('get-order', 'GET', `/orders/${order.body.orderId}`, { cookie: user })).body?.status === 'confirmed', 60_000, 'order confirmed');
    exercised.add('write-reservations');

    const now = Date.now();
    const deal = { title: 'Bundled', opensAt: new Date(now - 60_000).toISOString(), closesAt: new Date(now + 3_600_000).toISOString(), limit: 3 };
    expect((await call('put-deal', 'PUT', `/deals/${dealId}`, { cookie: admin, body: deal })).status).toBeLessThan(300);
    expect((await call('get-deal', 'GET', `/deals/${dealId}`)).body).toMatchObject({ remaining: 3 });
    expect((await call('create-coupon', 'POST', `/deals/${dealId}/coupons`, { cookie: user })).status).toBe(201);
    expect((await call('list-my-coupons', 'GET', '/me/coupons', { cookie: user })).status).toBe(200);
    expect((await call('audit-sale', 'POST', `/admin/audit/items/${itemId}`, { cookie: admin, body: { accepted: [order.body.orderId] } })).body).toMatchObject({ rows: 1, lost: 0 });
    expect((await call('audit-deal', 'POST', `/admin/audit/deals/${dealId}`, { cookie: admin, body: { accepted: [] } })).status).toBe(200);
    const prepared = await call('create-load-test-buyers', 'POST', '/admin/load-tests/buyers', { cookie: admin, body: { count: 2 } });
    expect(prepared.body.buyers).toHaveLength(2);
    expect((await call('get-me', 'GET', '/me', { cookie: prepared.body.buyers[0].cookie })).status).toBe(200);

    const created = await call('create-program', 'POST', '/programs', { cookie: admin, body: { title: 'Bundled Rust', careerTag: 'backend', type: 'course' } });
    expect(created.status).toBe(201);
    expect((await call('update-program', 'PUT', `/programs/${created.body.id}`, { cookie: admin, body: { title: 'Bundled Rust 2', careerTag: 'backend', type: 'course' } })).status).toBe(200);
    const page = await call('list-programs', 'GET', '/programs?careerTag=backend&types=course&page=1&size=50');
    expect(page.body.items.map((p: { title: string }) => p.title)).toContain('Bundled Rust 2');

    const first = await call('get-inbox-address', 'GET', '/me/inbox-address', { cookie: user });
    const rotated = await call('rotate-inbox-address', 'POST', '/me/inbox-address', { cookie: user });
    expect(rotated.body.address).not.toEqual(first.body.address);
    const subject = `Bundled issue ${now}`;
    await createTransport({ url: twin.smtpUrl, ignoreTLS: true }).sendMail({
      from: 'Bundled Weekly <news@bundled.example>',
      to: rotated.body.address,
      subject,
      html: '<p>Hello from a bundle</p>',
      list: { id: 'bundled.weekly.example' },
    });
    await until(async () => (await call('list-my-newsletters', 'GET', '/me/newsletters', { cookie: user })).body?.newsletters?.length > 0, 60_000, 'newsletter filed');
    exercised.add('receive-mail');
    const inbox = await call('list-my-inbox', 'GET', '/me/inbox?page=1', { cookie: user });
    const issue = inbox.body.issues.find((i: { subject: string }) => i.subject === subject);
    expect((await call('get-inbox-issue', 'GET', `/me/inbox/${issue.id}`, { cookie: user })).body).toMatchObject({ subject });
    expect((await call('mute-newsletter', 'POST', `/me/newsletters/${issue.newsletterId}/mute`, { cookie: user })).status).toBeLessThan(300);
    expect((await call('unmute-newsletter', 'DELETE', `/me/newsletters/${issue.newsletterId}/mute`, { cookie: user })).status).toBeLessThan(300);
    // The reader's newsletters past the day's cap are quarantined: one of them is released, as its bundle parses it.
    const smtp = createTransport({ url: twin.smtpUrl, ignoreTLS: true });
    for (let i = 0; i < LIMITS.newNewslettersPerReader.count; i++) {
      await smtp.sendMail({ from: 'Many <news@bundled.example>', to: rotated.body.address, subject: `Many ${i}`, text: 'Hello', list: { id: `many-${i}-${now}.bundled.example` } });
    }
    await until(async () => (await call('list-my-quarantine', 'GET', '/me/quarantine', { cookie: user })).body?.mail?.length > 0, 60_000, 'mail quarantined');
    const [held] = (await call('list-my-quarantine', 'GET', '/me/quarantine', { cookie: user })).body.mail;
    expect((await call('release-quarantined-mail', 'POST', `/me/quarantine/${held.id}/release`, { cookie: user })).body).toEqual({ id: held.id, outcome: 'filed' });

    expect((await call('reconcile-reservations', 'POST', '/__twin/functions/reconcile-reservations/invoke')).body).toMatchObject({ result: { drifted: 0 } });
    await call('migrate-database', 'POST', '/__twin/functions/migrate-database/invoke');

    const other = await signIn('user');
    expect((await call('delete-current-session', 'DELETE', '/sessions/current', { cookie: user })).status).toBe(204);
    expect((await call('delete-all-sessions', 'DELETE', '/sessions', { cookie: other })).status).toBe(204);
    expect((await call('get-me', 'GET', '/me', { cookie: other })).status).toBe(401);

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
        const [me, item] = await Promise.all([call('get-me', 'GET', '/me', { cookie: user }), call('get-item', 'GET', '/items/demo-item')]);
        statuses.push(me.status, item.status);
        return me.status === 200 && item.status === 200;
      },
      15_000,
      'requests served with the rotated passwords',
    );
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    const lookupsAfterRotation = (await secretLookups()) - lookupsBefore;
    for (let i = 0; i < 20; i++) expect((await call('get-me', 'GET', '/me', { cookie: user })).status).toBe(200);
    // Each instance whose connection was refused looked up again (every function's instance had a
    // Redis connection to lose), at most once per secret; requests after that look nothing up.
    expect(lookupsAfterRotation).toBeGreaterThanOrEqual(2);
    expect(lookupsAfterRotation).toBeLessThanOrEqual(2 * functions.length);
    expect((await secretLookups()) - lookupsBefore).toBe(lookupsAfterRotation);
  });
});
