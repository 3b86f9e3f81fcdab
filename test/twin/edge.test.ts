import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedIn, surgeClient } from '../../infra/client/client';
import { demoAccounts } from '../../infra/twin/seed';
import { startTwinProcess, type TwinProcess } from '../../infra/twin/twin-process';
import { until } from '../../shared/platform/wait';
import { GIVE_UP_MS, runWalkthrough } from '../support/docs-walkthrough';

/**
 * `npm start -- --edge --bundles`: the bundles `cdk deploy` uploads behind the prod stack's edge,
 * CloudFront's behaviours and origin request policies and the WAF web ACL as the synthesized
 * template has them (infra/twin/edge/). What a buyer, a reader and an admin do through it, and
 * what the edge refuses.
 */
describe('the twin behind the production edge', () => {
  let twin: TwinProcess;
  const stateDir = `.local/test-edge-${randomBytes(4).toString('hex')}`;
  const account = (role: 'user' | 'admin') => demoAccounts.find((a) => a.role === role)!;
  /** The error code of a refused answer (Surge's error body). */
  const codeOf = (answer: { error?: unknown }) => (answer.error as { error?: { code?: string } } | undefined)?.error?.code;

  /** Sends n GETs of a path through the edge from one loopback address (the viewer's address WAF counts), at most 16 at once; the statuses counted. */
  async function sendFrom(address: string, path: string, n: number): Promise<Map<number, number>> {
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const statuses = new Map<number, number>();
    let sent = 0;
    const one = () =>
      new Promise<void>((resolve, reject) => {
        const req = request(`${twin.url}${path}`, { agent, localAddress: address, headers: { 'user-agent': 'surge-edge-test' } }, (res) => {
          statuses.set(res.statusCode!, (statuses.get(res.statusCode!) ?? 0) + 1);
          res.resume().on('end', resolve);
        });
        req.on('error', reject);
        req.end();
      });
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (sent < n) {
          sent++;
          await one();
        }
      }),
    );
    agent.destroy();
    return statuses;
  }

  beforeAll(async () => {
    twin = await startTwinProcess({
      stateDir,
      database: 'surge_edge',
      args: ['--edge', '--bundles'],
      ownServices: true,
      env: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
    });
  });
  afterAll(async () => {
    await twin?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('refuses a request that goes around the edge straight to API Gateway, and serves it through the edge', async () => {
    // Act
    const around = await fetch(`${twin.gatewayUrl}/health`);
    const through = await fetch(`${twin.url}/health`);

    // Assess
    expect([around.status, ((await around.json()) as { error: { code: string } }).error.code]).toEqual([403, 'FORBIDDEN']);
    expect([through.status, await through.json()]).toEqual([200, { status: 'ok', down: [] }]);
    expect(through.headers.get('via')).toMatch(/CloudFront/);
  });

  it('passes the smoke run a user would make against it (npm run smoke)', async () => {
    // Act
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/ops/smoke.ts', twin.url], { env: process.env });

    // Assess
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toMatchObject({ ok: true, failed: 0, passed: 9 });
  });

  it('runs the walkthrough of docs/api.md, every curl answering as the page says', () => runWalkthrough(twin), GIVE_UP_MS + 30_000);

  it('sells an item behind a waiting room: join, the turn, the pass, an order with it, then sold out to the next', async () => {
    // Prepare: one unit, a room open already.
    const { client: admin } = await signedIn(twin.url, account('admin'));
    const { client: buyer } = await signedIn(twin.url, account('user'));
    const itemId = `edge-room-${randomBytes(3).toString('hex')}`;
    const path = { params: { path: { itemId } } };
    expect((await admin.PUT('/items/{itemId}/stock', { ...path, body: { quantity: 1, perUserLimit: 1 } })).response.status).toBeLessThan(300);
    const room = { opensAt: new Date(Date.now() - 1_000).toISOString(), admitPerSecond: 50, passSeconds: 120, graceSeconds: 60 };
    expect((await admin.PUT('/items/{itemId}/waiting-room', { ...path, body: room })).response.status).toBe(200);

    // Act
    const joined = await buyer.POST('/items/{itemId}/queue', path);
    await until(async () => (await buyer.GET('/items/{itemId}/queue/me', path)).data?.admitted === true, 60_000, 'admitted');
    const pass = (await buyer.POST('/items/{itemId}/queue/pass', path)).data!;
    const withoutPass = await buyer.POST('/items/{itemId}/orders', {
      params: { path: { itemId }, header: { 'idempotency-key': randomBytes(8).toString('hex') } },
      body: { quantity: 1 },
    });
    const order = await buyer.POST('/items/{itemId}/orders', {
      params: { path: { itemId }, header: { 'idempotency-key': randomBytes(8).toString('hex'), 'waiting-room-pass': pass.token } },
      body: { quantity: 1 },
    });
    const newcomer = surgeClient(twin.url);
    const signedUp = await newcomer.POST('/users', {
      body: { email: `edge-${randomBytes(3).toString('hex')}@surge.test`, password: 'a passphrase at the edge' },
    });
    const { client: late } = await signedIn(twin.url, { email: signedUp.data!.user.email, password: 'a passphrase at the edge' });
    const lateJoin = await late.POST('/items/{itemId}/queue', path);

    // Assess: the pass reached the function (without it, the order is refused), and the room closed at sold out.
    expect(joined.response.status).toBe(201);
    expect([withoutPass.response.status, codeOf(withoutPass)]).toEqual([403, 'PASS_REQUIRED']);
    expect(order).toMatchObject({ response: { status: 202 }, data: { status: 'pending' } });
    expect([lateJoin.response.status, codeOf(lateJoin)]).toEqual([409, 'SOLD_OUT']);
    await until(
      async () => (await buyer.GET('/orders/{orderId}', { params: { path: { orderId: order.data!.orderId } } })).data?.status === 'confirmed',
      60_000,
      'order confirmed',
    );
    expect((await admin.POST('/admin/audit/items/{itemId}', { ...path, body: { accepted: [order.data!.orderId] } })).data).toMatchObject({ rows: 1, lost: 0 });
  });

  it('answers a feed poll whose copy is current 304, its If-None-Match passed on by the feeds’ behaviour', async () => {
    // Prepare
    const { client: reader } = await signedIn(twin.url, account('user'));
    const feed = (await reader.GET('/me/feeds')).data!.all.atom;
    const first = await fetch(feed.replace(/^https?:\/\/[^/]+/, twin.url));
    const etag = first.headers.get('etag')!;

    // Act
    const again = await fetch(feed.replace(/^https?:\/\/[^/]+/, twin.url), { headers: { 'if-none-match': etag } });

    // Assess
    expect([first.status, again.status]).toEqual([200, 304]);
    expect(feed.startsWith(twin.url)).toBe(true);
  });

  it('lets an audit of more than 8 KB through and blocks a 9 KB body anywhere else with WAF’s 403, as it blocks a request with no User-Agent', async () => {
    // Prepare: an audit naming enough made-up ids to pass 8 KB.
    const { client: admin, cookie } = await signedIn(twin.url, account('admin'));
    const accepted = Array.from({ length: 300 }, () => `demo-item.${Date.now().toString(36).padStart(9, '0')}${randomBytes(7).toString('hex')}`);
    const large = JSON.stringify({ title: 'x'.repeat(9 * 1024), careerTag: 'backend', type: 'course' });

    // Act
    const audit = await admin.POST('/admin/audit/items/{itemId}', { params: { path: { itemId: 'demo-item' } }, body: { accepted } });
    const program = await fetch(`${twin.url}/programs`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: large });
    const noAgent = await new Promise<number>((resolve, reject) =>
      request(`${twin.url}/health`, (res) => resolve(res.resume().statusCode!))
        .on('error', reject)
        .end(),
    );

    // Assess
    expect(JSON.stringify({ accepted }).length).toBeGreaterThan(8 * 1024);
    expect(audit.response.status).toBe(200);
    expect([program.status, program.headers.get('content-type')]).toEqual([403, 'text/html']);
    expect(await program.text()).toContain('Request blocked');
    expect(noAgent).toBe(403);
  });

  it('blocks one address past its feed rate (30,000 in 5 minutes) and past its rate elsewhere (3,000), each rule leaving the other’s paths alone', async () => {
    // Act: each address its own (the viewer's address is what WAF counts), each path answered 404 by API Gateway at no function's cost.
    const feeds = await sendFrom('127.0.0.2', '/feeds/none', 30_000);
    const feedPast = await sendFrom('127.0.0.2', '/feeds/none', 1);
    const elsewhereFromIt = await sendFrom('127.0.0.2', '/health', 1);
    const rest = await sendFrom('127.0.0.3', '/none', 3_000);
    const restPast = await sendFrom('127.0.0.3', '/health', 1);
    const feedFromIt = await sendFrom('127.0.0.3', '/feeds/none', 1);

    // Assess
    expect(Object.fromEntries(feeds)).toEqual({ 404: 30_000 });
    expect(Object.fromEntries(feedPast)).toEqual({ 403: 1 });
    expect(Object.fromEntries(elsewhereFromIt)).toEqual({ 200: 1 });
    expect(Object.fromEntries(rest)).toEqual({ 404: 3_000 });
    expect(Object.fromEntries(restPast)).toEqual({ 403: 1 });
    expect(Object.fromEntries(feedFromIt)).toEqual({ 404: 1 });
  });
});
