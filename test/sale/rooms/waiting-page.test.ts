/**
 * The waiting page in headless Chromium (Debian's), served with the room's routes as the twin's
 * gateway serves them: it shows the place, the wait, the odds and sold out, as a screenshot
 * records, and asks nothing of any host but its own; past API Gateway's throttle, whose 429 names
 * no error and no time, it says the shop is busy and orders once.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSale, reserve } from '../../../shared/sale/orders/sale';
import { putRoom } from '../../../shared/sale/rooms/admin';
import { claimPass, joinQueue } from '../../../shared/sale/rooms/rooms';
import { LOCAL_SOURCE } from '../../../infra/twin/load-test-sources';
import { TOO_MANY_REQUESTS } from '../../../infra/twin/events/gateway';
import { redis } from '../../../shared/platform/clients/redis';
import { itemKeys } from '../../../shared/sale/orders/model';
import { httpEvent, lambdaContext } from '../../support/events';
import { uniqueItemId } from '../../support/orders';
import { ownReservationQueue, testSqs } from '../../support/queues';
import { signedInUsers, type SignedInUser } from '../../support/sessions';
import { route } from '../../support/routes';

const claimQueuePass = await route('claim-queue-pass');
const getQueueStatus = await route('get-queue-status');
const getWaitingPage = await route('get-waiting-page');
const joinQueueRoute = await route('join-queue');
const createOrder = await route('create-order');
const getOrder = await route('get-order');

await ownReservationQueue(testSqs());

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = new URL('../../.local/screenshots/', import.meta.url);

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** The routes the page calls by method and path shape, with the path parameter each names; sign-in has none here (its throttle answers it). */
const ROUTES: [string, RegExp, string, Handler][] = [
  ['GET', /^\/wait\/([^/]+)$/, 'itemId', getWaitingPage as Handler],
  ['GET', /^\/items\/([^/]+)\/queue\/me$/, 'itemId', getQueueStatus as Handler],
  ['POST', /^\/items\/([^/]+)\/queue$/, 'itemId', joinQueueRoute as Handler],
  ['POST', /^\/items\/([^/]+)\/queue\/pass$/, 'itemId', claimQueuePass as Handler],
  ['POST', /^\/items\/([^/]+)\/orders$/, 'itemId', createOrder as Handler],
  ['GET', /^\/orders\/([^/]+)$/, 'orderId', getOrder as Handler],
];

/** The headers of a request the routes read besides the cookie. */
const READ_HEADERS = ['content-type', 'idempotency-key', 'waiting-room-pass'];

async function roomItem(stock: number, opensAt: number): Promise<string> {
  const itemId = uniqueItemId('page');
  await openSale(itemId, stock, 1);
  await putRoom(itemId, { opensAt, admitPerSecond: 1, passSeconds: 120, graceSeconds: 60, paused: false, statusReadsPerSecond: 1_000 });
  return itemId;
}

describe.skipIf(!existsSync(CHROMIUM))('the waiting page in headless Chromium', () => {
  let server: Server;
  let origin: string;
  let browser: Browser;
  let buyers: SignedInUser[];
  /** Requests API Gateway's throttle turns away before they reach a function, by path shape (any method): how many more, as it answers them (429, no error code, no Retry-After). */
  const throttled = new Map<string, number>();
  /** Every request the page sent, with its Idempotency-Key. */
  const sent: { method: string; path: string; key?: string }[] = [];

  beforeAll(async () => {
    buyers = await signedInUsers(5);
    server = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const path = new URL(request.url!, 'http://x').pathname;
      const key = request.headers['idempotency-key'] as string | undefined;
      sent.push({ method: request.method!, path, ...(key ? { key } : {}) });
      const turnedAway = [...throttled].find(([shape, left]) => left > 0 && new RegExp(`^${request.method} ${shape}$`).test(`${request.method} ${path}`));
      if (turnedAway) {
        throttled.set(turnedAway[0], turnedAway[1] - 1);
        return void response.writeHead(429, { 'content-type': 'application/json' }).end(TOO_MANY_REQUESTS);
      }
      const route = ROUTES.find(([method, pattern]) => method === request.method && pattern.test(path));
      if (!route) return void response.writeHead(404).end();
      const [, pattern, parameter, handler] = route;
      const cookies = (request.headers.cookie ?? '').split(/;\s*/).filter(Boolean);
      const headers = Object.fromEntries(
        READ_HEADERS.filter((name) => request.headers[name] !== undefined).map((name) => [name, request.headers[name] as string]),
      );
      const event = httpEvent(request.method === 'GET' ? 'get-me' : 'post-sessions', {
        method: request.method,
        path,
        pathParameters: { [parameter]: decodeURIComponent(pattern.exec(path)![1]!) },
        cookies,
        headers,
        sourceIp: '127.0.0.1',
      });
      event.body = chunks.length ? Buffer.concat(chunks).toString() : undefined;
      const answer = await handler(event, lambdaContext());
      response.writeHead(answer.statusCode!, answer.headers as Record<string, string>).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Opens the page as `buyer`, or signed out; every request for another origin is refused and noted. */
  async function open(itemId: string, buyer?: SignedInUser) {
    const context = await browser.newContext();
    if (buyer) {
      const [name, value] = buyer.cookie.split('=') as [string, string];
      await context.addCookies([{ name, value, url: origin }]);
    }
    const page = await context.newPage();
    const elsewhere: string[] = [];
    await page.route('**/*', (route) => (route.request().url().startsWith(origin) ? route.continue() : (elsewhere.push(route.request().url()), route.abort())));
    await page.goto(`${origin}/wait/${itemId}`);
    return { page, elsewhere, context };
  }

  it('shows a waiter its place, the wait and the odds before the opening', async () => {
    // Prepare: the room opens in an hour; the buyer is one of three in it, with a unit for each
    // (ranks before the opening are drawn at random: with fewer units, its wait could hang on units that never come back).
    const itemId = await roomItem(3, Date.now() + 3_600_000);
    for (const buyer of buyers.slice(0, 3)) await joinQueue(itemId, buyer.id);
    const { page, elsewhere, context } = await open(itemId, buyers[0]!);

    // Act
    await page.waitForSelector('#figures:not([hidden])', { timeout: 20_000 });
    await page.screenshot({ path: new URL('waiting.png', SHOTS).pathname, fullPage: true });

    // Assess
    expect(await page.textContent('#summary')).toMatch(/You are in the queue\. The sale opens at/);
    expect(Number(await page.textContent('#position'))).toBeGreaterThanOrEqual(1);
    expect(await page.textContent('#wait')).toMatch(/^(\d+ min|1 h \d+ min)$/);
    expect(await page.textContent('#odds')).toMatch(/^\d+ %$/);
    expect(await page.textContent('#sold')).toBe('No');
    expect(await page.getAttribute('#summary', 'aria-live')).toBe('polite');
    expect(elsewhere).toEqual([]);
    await context.close();
  }, 60_000);

  it('says sold out to a waiter once the last unit is sold, and offers a join to one not in the queue', async () => {
    // Prepare: one unit, sold to the first in line; the second waits on.
    const itemId = await roomItem(1, Date.now() - 1_000);
    await joinQueue(itemId, buyers[1]!.id);
    await joinQueue(itemId, buyers[2]!.id);
    const pass = await claimPass(itemId, buyers[1]!.id, Date.now() + 2_000);
    await reserve({ itemId, userId: buyers[1]!.id, quantity: 1, idempotencyKey: 'page-last', source: LOCAL_SOURCE, pass: pass.token });
    const waiter = await open(itemId, buyers[2]!);
    const stranger = await open(itemId, buyers[3]!);

    // Act
    await waiter.page.waitForFunction("document.getElementById('sold')?.textContent === 'Yes'", undefined, { timeout: 20_000 });
    await waiter.page.screenshot({ path: new URL('sold-out.png', SHOTS).pathname, fullPage: true });
    await stranger.page.waitForSelector('#join:not([hidden])', { timeout: 20_000 });

    // Assess
    expect(await waiter.page.textContent('#summary')).toMatch(/^Sold out/);
    expect(await waiter.page.textContent('#odds')).toBe('0 %');
    expect(await stranger.page.textContent('#summary')).toMatch(/Join the queue/);
    expect([...waiter.elsewhere, ...stranger.elsewhere]).toEqual([]);
    await waiter.context.close();
    await stranger.context.close();
  }, 60_000);

  it("orders once through API Gateway's throttle: says the shop is busy and sends the order again under its one key", async () => {
    // Prepare: the buyer is first in an open room, the page holds the pass, and the throttle turns away its first two orders.
    const itemId = await roomItem(1, Date.now() - 1_000);
    const buyer = buyers[4]!;
    await joinQueue(itemId, buyer.id);
    const { page, elsewhere, context } = await open(itemId, buyer);
    await page.waitForSelector('#order:not([hidden])', { timeout: 20_000 });
    throttled.set('/items/[^/]+/orders', 2);

    // Act
    await page.click('#order');
    await page.locator('#summary', { hasText: /^The shop is busy/ }).waitFor({ timeout: 20_000 });
    const firstBusy = await page.textContent('#summary');
    await page.locator('#summary', { hasText: /^Your order \S+ is placed/ }).waitFor({ timeout: 30_000 });

    // Assess: the first wait is the back-off's first step (1 s, up to half again), no Retry-After having been given.
    expect(firstBusy).toMatch(/^The shop is busy; sending your order again in [12] s\. It will not be placed twice\.$/);
    const orders = sent.filter((request) => request.method === 'POST' && request.path === `/items/${itemId}/orders`);
    expect(orders).toHaveLength(3);
    expect(new Set(orders.map((request) => request.key)).size).toBe(1);
    expect(await redis().hget(itemKeys(itemId).buyers, String(buyer.id))).toBe('1');
    expect(elsewhere).toEqual([]);
    await context.close();
  }, 90_000);

  it("says the shop is busy, not that sign-in failed, when API Gateway's throttle turns a sign-in away", async () => {
    // Prepare: a signed-out page, and sign-in's throttle spent.
    const itemId = await roomItem(1, Date.now() + 3_600_000);
    const { page, elsewhere, context } = await open(itemId);
    await page.waitForSelector('#signin:not([hidden])', { timeout: 20_000 });
    throttled.set('/sessions', 1);

    // Act
    await page.fill('#email', 'someone@surge.test');
    await page.fill('#password', 'a password long enough');
    await page.click('#signin button[type=submit]');
    await page.locator('#summary', { hasText: /^The shop is busy/ }).waitFor({ timeout: 20_000 });

    // Assess
    expect(await page.textContent('#summary')).toBe('The shop is busy right now; try again in a few seconds.');
    expect(elsewhere).toEqual([]);
    await context.close();
  }, 60_000);
});
