/**
 * The waiting page as a new buyer meets it, in headless Chromium (Debian's) against a twin: signed
 * out, it signs up on the page; it joins, gets its turn and its pass, and orders once however the
 * buyer clicks, though the first answer is lost to a 503; a reload shows the order and its status,
 * not the spent pass. Screenshots of each step go to .local/screenshots/.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import type { RowDataPacket } from 'mysql2';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedIn } from '../../../infra/client/client';
import { demoAccounts } from '../../../infra/twin/seed';
import { startTwin, type Twin } from '../../../infra/twin/twin';
import { sql } from '../../support/orders';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = new URL('../../.local/screenshots/', import.meta.url);

describe.skipIf(!existsSync(CHROMIUM))('the waiting page, as a new buyer uses it', () => {
  let twin: Twin;
  let browser: Browser;

  beforeAll(async () => {
    twin = await startTwin({ port: 0, smtpPort: 0, stateDir: '.local/test', database: 'surge_page', queuePrefix: 'waiting-page-buyer-' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await twin?.stop();
  });

  it('signs a buyer up on the page, orders once through a double click and a lost answer, and shows the order after a reload', async () => {
    // Prepare: one unit behind a room open already, and a buyer without an account or a session.
    const itemId = `page-${randomBytes(3).toString('hex')}`;
    const { client: admin } = await signedIn(twin.url, demoAccounts.find((a) => a.role === 'admin')!);
    expect((await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 1, perUserLimit: 1 } })).response.status).toBeLessThan(
      300,
    );
    const room = { opensAt: new Date(Date.now() - 1_000).toISOString(), admitPerSecond: 50, passSeconds: 120, graceSeconds: 60 };
    expect((await admin.PUT('/items/{itemId}/waiting-room', { params: { path: { itemId } }, body: room })).response.status).toBe(200);
    const context = await browser.newContext();
    const page = await context.newPage();
    const elsewhere: string[] = [];
    const orders: { key: string | undefined; answered: number }[] = [];
    await page.route('**/*', async (route) => {
      const request = route.request();
      if (!request.url().startsWith(twin.url)) return (elsewhere.push(request.url()), route.abort());
      if (request.method() !== 'POST' || !request.url().endsWith('/orders')) return route.continue();
      // The first order reaches the API, and its answer is lost to a 503, as from a function out of time.
      const response = await route.fetch();
      const lost = orders.length === 0;
      orders.push({ key: request.headers()['idempotency-key'], answered: lost ? 503 : response.status() });
      return lost
        ? route.fulfill({
            status: 503,
            headers: { 'retry-after': '1', 'content-type': 'application/json' },
            body: '{"error":{"code":"UNAVAILABLE","message":"Try again"}}',
          })
        : route.fulfill({ response });
    });

    // Act: signed out, the page offers to sign in or up; the buyer signs up there.
    await page.goto(`${twin.url}/wait/${itemId}`);
    await page.waitForSelector('#signin:not([hidden])', { timeout: 30_000 });
    const signedOut = await page.textContent('#summary');
    await page.screenshot({ path: new URL('page-signed-out.png', SHOTS).pathname, fullPage: true });
    await page.fill('#email', `buyer-${randomBytes(3).toString('hex')}@surge.test`);
    await page.fill('#password', 'a long enough passphrase');
    await page.click('#signup');
    await page.waitForSelector('#join:not([hidden])', { timeout: 30_000 });
    await page.click('#join');
    await page.waitForSelector('#order:not([hidden])', { timeout: 30_000 });
    await page.screenshot({ path: new URL('page-holding.png', SHOTS).pathname, fullPage: true });
    // A double click: one order, its first answer lost, sent again under the same key.
    await page.dblclick('#order');
    // Locators, not a page function: the page's Content-Security-Policy allows no evaluated string.
    await page.locator('#summary', { hasText: /is confirmed/ }).waitFor({ timeout: 60_000 });
    await page.screenshot({ path: new URL('page-ordered.png', SHOTS).pathname, fullPage: true });
    await page.reload();
    await page.locator('#summary', { hasText: /is confirmed/ }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: new URL('page-after-reload.png', SHOTS).pathname, fullPage: true });

    // Assess
    expect(signedOut).toBe('Sign in to take your place in the queue.');
    expect(orders.map((o) => o.answered)).toEqual([503, 202]);
    expect(new Set(orders.map((o) => o.key)).size).toBe(1);
    expect(await page.isHidden('#order')).toBe(true);
    expect(await page.isHidden('#figures')).toBe(true);
    expect(await page.textContent('#summary')).toMatch(/^Your order \S+ is confirmed/);
    const rows = await sql<RowDataPacket>('SELECT status FROM surge_page.orders WHERE item_id = ?', [itemId]);
    expect(rows.map((r) => r.status)).toEqual(['confirmed']);
    expect(elsewhere).toEqual([]);
    await context.close();
  }, 180_000);

  it('answers a link to an item without a room with a 404 page that says so', async () => {
    // Prepare: an item on sale, but with no room.
    const itemId = `page-${randomBytes(3).toString('hex')}`;
    const { client: admin } = await signedIn(twin.url, demoAccounts.find((a) => a.role === 'admin')!);
    expect((await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 1, perUserLimit: 1 } })).response.status).toBeLessThan(
      300,
    );
    const context = await browser.newContext();
    const page = await context.newPage();

    // Act
    const answer = await page.goto(`${twin.url}/wait/${itemId}`);
    await page.screenshot({ path: new URL('page-no-room.png', SHOTS).pathname, fullPage: true });

    // Assess
    expect(answer?.status()).toBe(404);
    expect(await page.textContent('h1')).toBe(`No waiting room for ${itemId}`);
    expect(await page.isVisible('#signin')).toBe(false);
    await context.close();
  }, 60_000);
});
