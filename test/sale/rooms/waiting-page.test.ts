/**
 * The waiting page in headless Chromium (Debian's), served with the room's routes as the twin's
 * gateway serves them: it shows the place, the wait, the odds and sold out, as a screenshot
 * records, and asks nothing of any host but its own.
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
import { httpEvent, lambdaContext } from '../../support/events';
import { uniqueItemId } from '../../support/orders';
import { signedInUsers, type SignedInUser } from '../../support/sessions';
import { route } from '../../support/routes';

const claimQueuePass = await route('claim-queue-pass');
const getQueueStatus = await route('get-queue-status');
const getWaitingPage = await route('get-waiting-page');
const joinQueueRoute = await route('join-queue');

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = new URL('../../.local/screenshots/', import.meta.url);

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** The room's routes by method and path shape, with the item id each path names. */
const ROUTES: [string, RegExp, Handler][] = [
  ['GET', /^\/wait\/([^/]+)$/, getWaitingPage as Handler],
  ['GET', /^\/items\/([^/]+)\/queue\/me$/, getQueueStatus as Handler],
  ['POST', /^\/items\/([^/]+)\/queue$/, joinQueueRoute as Handler],
  ['POST', /^\/items\/([^/]+)\/queue\/pass$/, claimQueuePass as Handler],
];

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

  beforeAll(async () => {
    buyers = await signedInUsers(4);
    server = createServer((request, response) => {
      const path = new URL(request.url!, 'http://x').pathname;
      const route = ROUTES.find(([method, pattern]) => method === request.method && pattern.test(path));
      if (!route) return void response.writeHead(404).end();
      const itemId = decodeURIComponent(route[1].exec(path)![1]!);
      const cookies = (request.headers.cookie ?? '').split(/;\s*/).filter(Boolean);
      const event = httpEvent(request.method === 'GET' ? 'get-me' : 'post-sessions', {
        method: request.method,
        path,
        pathParameters: { itemId },
        cookies,
        sourceIp: '127.0.0.1',
      });
      event.body = undefined;
      void route[2](event, lambdaContext()).then((answer) => response.writeHead(answer.statusCode!, answer.headers as Record<string, string>).end(answer.body));
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

  /** Opens the page as `buyer`; every request for another origin is refused and noted. */
  async function open(itemId: string, buyer: SignedInUser) {
    const context = await browser.newContext();
    const [name, value] = buyer.cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: origin }]);
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
});
