/**
 * The waiting room's routes through their handlers, as the gateway calls them: the admin's room,
 * joining (once per account, limited per source), the status, the claim, an order that must bring
 * its pass, sold out, and the waiting page.
 */
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { openSale } from '../../../shared/sale/orders/sale';
import { LIMITS } from '../../../shared/limits/limits';
import { httpEvent, lambdaContext } from '../../support/events';
import { orderEvent } from '../../support/order-events';
import { uniqueItemId } from '../../support/orders';
import { ownReservationQueue, testSqs } from '../../support/queues';
import { signedInUsers, type SignedInUser } from '../../support/sessions';
import { route } from '../../support/routes';

const claimQueuePass = await route('claim-queue-pass');
const createOrder = await route('create-order');
const getQueueStatus = await route('get-queue-status');
const getWaitingPage = await route('get-waiting-page');
const joinQueue = await route('join-queue');
const putWaitingRoom = await route('put-waiting-room');

type Result = APIGatewayProxyStructuredResultV2;
const body = (r: Result) => JSON.parse(r.body ?? 'null');

await ownReservationQueue(testSqs());

let admin: SignedInUser;
let buyers: SignedInUser[];
/** The tests' load-test allowance exempts TEST-NET-3 (test/setup/services.ts): joins come from there unless a test holds them to the limit. */
const EXEMPT_SOURCE = '203.0.113.9';
/** An address of the IPv6 documentation prefix, this run's own, held to the per-source limit. */
const limitedSource = () => `2001:db8::${randomBytes(6).toString('hex').match(/.{4}/g)!.join(':')}`;

const roomEvent = (method: string, path: string, itemId: string, cookie: string, extra: { body?: unknown; sourceIp?: string } = {}) =>
  httpEvent(method === 'GET' ? 'get-me' : 'post-sessions', { method, path, pathParameters: { itemId }, cookies: [cookie], ...extra });

const room = (overrides: Record<string, unknown> = {}) => ({
  opensAt: new Date(Date.now() - 1_000).toISOString(),
  admitPerSecond: 1_000,
  passSeconds: 120,
  graceSeconds: 60,
  ...overrides,
});

async function itemWithRoom(stock: number, settings = room()): Promise<string> {
  const itemId = uniqueItemId('room-route');
  await openSale(itemId, stock, 1);
  const answer = await putWaitingRoom(roomEvent('PUT', `/items/${itemId}/waiting-room`, itemId, admin.cookie, { body: settings }), lambdaContext());
  expect(answer.statusCode).toBe(200);
  return itemId;
}

const join = (itemId: string, buyer: SignedInUser, sourceIp = EXEMPT_SOURCE) =>
  joinQueue(roomEvent('POST', `/items/${itemId}/queue`, itemId, buyer.cookie, { sourceIp }), lambdaContext());
const status = (itemId: string, buyer: SignedInUser) => getQueueStatus(roomEvent('GET', `/items/${itemId}/queue/me`, itemId, buyer.cookie), lambdaContext());
const claim = (itemId: string, buyer: SignedInUser) => claimQueuePass(roomEvent('POST', `/items/${itemId}/queue/pass`, itemId, buyer.cookie), lambdaContext());
const order = (itemId: string, buyer: SignedInUser, key: string, pass?: string) => {
  const event = orderEvent(itemId, buyer.cookie, key, { quantity: 1 });
  if (pass !== undefined) event.headers = { ...event.headers, 'waiting-room-pass': pass };
  return createOrder(event, lambdaContext());
};

beforeAll(async () => {
  admin = (await signedInUsers(1, 'admin'))[0]!;
  buyers = await signedInUsers(LIMITS.queueJoinsPerSource.count + 2);
});

describe('PUT /items/{itemId}/waiting-room', () => {
  it('sets the room for an admin only, and only on an item on sale', async () => {
    // Prepare
    const itemId = uniqueItemId('room-route');
    await openSale(itemId, 5, 1);
    const put = (cookie: string, id: string, settings: unknown) =>
      putWaitingRoom(roomEvent('PUT', `/items/${id}/waiting-room`, id, cookie, { body: settings }), lambdaContext());

    // Act
    const set = await put(admin.cookie, itemId, room({ paused: true }));
    const byBuyer = await put(buyers[0]!.cookie, itemId, room());
    const notOnSale = await put(admin.cookie, uniqueItemId('nothing'), room());
    const invalid = await put(admin.cookie, itemId, room({ graceSeconds: 1 }));

    // Assess
    expect(set.statusCode).toBe(200);
    expect(body(set)).toMatchObject({ id: itemId, admitPerSecond: 1_000, paused: true, statusReadsPerSecond: 1_000 });
    expect(byBuyer.statusCode).toBe(403);
    expect([notOnSale.statusCode, body(notOnSale).error.code]).toEqual([409, 'NOT_ON_SALE']);
    expect([invalid.statusCode, body(invalid).error.code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it('refuses a room that admits faster than the order route’s throttle passes orders, naming the rate, but never a pause', async () => {
    // Prepare: create-order's route passes 4,000 a second (functions/table.ts)
    const itemId = uniqueItemId('room-route');
    await openSale(itemId, 5, 1);
    const opensAt = new Date(Date.now() - 1_000).toISOString();
    const put = (admitPerSecond: number, paused = false) =>
      putWaitingRoom(
        roomEvent('PUT', `/items/${itemId}/waiting-room`, itemId, admin.cookie, { body: room({ opensAt, admitPerSecond, paused }) }),
        lambdaContext(),
      );

    // Act
    const tooFast = await put(4_001);
    const atTheRate = await put(4_000);
    const pausedTooFast = await put(4_001, true);

    // Assess
    expect([tooFast.statusCode, body(tooFast).error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(body(tooFast).error.details).toEqual([
      { path: 'body.admitPerSecond', message: expect.stringMatching(/^must be at most 4000, the order route's throttle/) },
    ]);
    expect(atTheRate.statusCode).toBe(200);
    // A pause goes through whatever the rate, as a room kept from before a lower throttle must be pausable.
    expect(pausedTooFast.statusCode).toBe(200);
  });
});

describe('the queue', () => {
  it('joins once, reads the place, claims the pass, and takes an order only with it', async () => {
    // Prepare
    const itemId = await itemWithRoom(10);
    const [buyer, other] = [buyers[0]!, buyers[1]!];

    // Act
    const first = await join(itemId, buyer);
    const again = await join(itemId, buyer);
    const place = await status(itemId, buyer);
    const notJoined = await status(itemId, other);
    const pass = await claim(itemId, buyer);
    const without = await order(itemId, buyer, 'no-pass');
    const forged = await order(itemId, buyer, 'forged', 'AAAAAAAAAAAAAAAAAAAAAA');
    const malformed = await order(itemId, buyer, 'malformed', 'not a token');
    const withPass = await order(itemId, buyer, 'with-pass', body(pass).token);
    const holding = await status(itemId, buyer);

    // Assess
    expect([first.statusCode, body(first)]).toEqual([201, { position: 1 }]);
    expect([again.statusCode, body(again)]).toEqual([200, { position: 1 }]);
    expect(place.statusCode).toBe(200);
    expect(body(place)).toMatchObject({ state: 'admitted', position: 1, ahead: 0, admitted: true, odds: 1, soldOut: false });
    expect(body(place).refreshSeconds).toBeGreaterThanOrEqual(1);
    expect(Date.parse(body(place).claimBy)).toBeGreaterThan(Date.now());
    expect([notJoined.statusCode, body(notJoined).error.code]).toEqual([404, 'NOT_FOUND']);
    expect(pass.statusCode).toBe(200);
    expect(body(pass).token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect([without.statusCode, body(without).error.code]).toEqual([403, 'PASS_REQUIRED']);
    expect([forged.statusCode, body(forged).error.code]).toEqual([403, 'PASS_REQUIRED']);
    expect([malformed.statusCode, body(malformed).error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(withPass.statusCode).toBe(202);
    expect(body(holding)).toMatchObject({ state: 'done', admitted: false });
  });

  it('answers a claim before the turn NOT_ADMITTED, and a paused room keeps it so', async () => {
    // Prepare: one a second, opening in an hour.
    const itemId = await itemWithRoom(10, room({ opensAt: new Date(Date.now() + 3_600_000).toISOString(), admitPerSecond: 1 }));
    await join(itemId, buyers[0]!);

    // Act
    const early = await claim(itemId, buyers[0]!);
    const place = await status(itemId, buyers[0]!);

    // Assess
    expect([early.statusCode, body(early).error.code]).toEqual([409, 'NOT_ADMITTED']);
    expect(body(place)).toMatchObject({ state: 'waiting', admitted: false, position: 1 });
    expect(body(place).estimatedWaitSeconds).toBeGreaterThan(3_000);
  });

  it('limits joins from one source address, whoever signs in', async () => {
    // Prepare
    const itemId = await itemWithRoom(100);
    const address = limitedSource();
    const allowed = LIMITS.queueJoinsPerSource.count;

    // Act
    const answers = [];
    for (const buyer of buyers.slice(0, allowed + 1)) answers.push(await join(itemId, buyer, address));

    // Assess
    expect(answers.slice(0, allowed).map((a) => a.statusCode)).toEqual(Array(allowed).fill(201));
    const refused = answers[allowed]!;
    expect([refused.statusCode, body(refused).error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(refused.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('answers a join SOLD_OUT at once when no unit is left and no pass outstanding, and says so to those waiting', async () => {
    // Prepare: one unit, bought by the first in line.
    const itemId = await itemWithRoom(1);
    await join(itemId, buyers[0]!);
    await join(itemId, buyers[1]!);
    const pass = body(await claim(itemId, buyers[0]!));
    expect((await order(itemId, buyers[0]!, 'last-unit', pass.token)).statusCode).toBe(202);

    // Act
    const late = await join(itemId, buyers[2]!);
    const waiting = await status(itemId, buyers[1]!);

    // Assess
    expect([late.statusCode, body(late).error.code]).toEqual([409, 'SOLD_OUT']);
    expect(body(waiting)).toMatchObject({ soldOut: true, odds: 0 });
  });
});

describe('GET /wait/{itemId}', () => {
  const pageOf = (itemId: string) => getWaitingPage(httpEvent('get-me', { path: `/wait/${itemId}`, pathParameters: { itemId }, cookies: [] }), lambdaContext());

  it('answers a page that holds its script and style inline, under a policy that lets it reach its own origin only', async () => {
    // Prepare
    const itemId = await itemWithRoom(10);

    // Act
    const page = await pageOf(itemId);

    // Assess
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['content-type']).toMatch(/^text\/html/);
    expect(page.headers?.['content-security-policy']).toMatch(/default-src 'none'.*connect-src 'self'/);
    expect(page.body).toMatch(/<html lang="en">/);
    expect(page.body).not.toMatch(/\ssrc=|<link/i);
  });

  it('answers 404 with a page that says so, for an item on sale without a room and for no item at all', async () => {
    // Prepare
    const onSale = uniqueItemId('no-room');
    await openSale(onSale, 10, 1);

    // Act
    const pages = await Promise.all([pageOf(onSale), pageOf(uniqueItemId('no-item'))]);

    // Assess
    for (const page of pages) {
      expect(page.statusCode).toBe(404);
      expect(page.headers?.['content-type']).toMatch(/^text\/html/);
      expect(page.body).toMatch(/<h1>No waiting room for /);
      expect(page.body).not.toMatch(/<script/);
    }
  });
});

describe('claiming a pass', () => {
  it('holds each buyer to the claims’ rate, whatever the room answers', async () => {
    // Prepare: a buyer whose turn has not come (the room opens in an hour).
    const [buyer] = await signedInUsers(1);
    const itemId = await itemWithRoom(10, room({ opensAt: new Date(Date.now() + 3_600_000).toISOString() }));
    expect((await join(itemId, buyer!)).statusCode).toBe(201);

    // Act
    const answers = [];
    for (let i = 0; i <= LIMITS.queueClaimsPerBuyer.count; i++) answers.push(await claim(itemId, buyer!));

    // Assess
    expect(answers.slice(0, -1).map((a) => body(a).error.code)).toEqual(Array(LIMITS.queueClaimsPerBuyer.count).fill('NOT_ADMITTED'));
    expect([answers.at(-1)!.statusCode, body(answers.at(-1)!).error.code]).toEqual([429, 'RATE_LIMITED']);
  });
});
