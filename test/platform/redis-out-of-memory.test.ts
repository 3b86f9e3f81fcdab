import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { APIGatewayProxyStructuredResultV2, SQSEvent } from 'aws-lambda';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmfCollector, onStdoutLine } from '../../infra/twin/lambda/emf';
import type { Poller } from '../../infra/twin/events/poller';
import { startRedis } from '../../infra/twin/services/services';
import { redis } from '../../shared/platform/clients/redis';
import { cache } from '../../shared/cache/cache';
import { insertProgram } from '../../shared/catalog/programs';
import { dealKeys } from '../../shared/coupons/model';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { itemKeys } from '../../shared/sale/orders/model';
import { openSale, remainingStock } from '../../shared/sale/orders/sale';
import { httpEvent, lambdaContext } from '../support/events';
import { orderEvent } from '../support/order-events';
import { orderRows, sql, uniqueItemId } from '../support/orders';
import { depth, ownReservationQueue, pollQueue, testSqs } from '../support/queues';
import { signedInUsers, type SignedInUser } from '../support/sessions';
import { until } from '../../shared/platform/wait';
import { handler as writeReservations } from '../../functions/write-reservations';
import { route } from '../support/routes';

const createSession = await route('create-session');
const createCoupon = await route('create-coupon');
const createOrder = await route('create-order');
const deleteAllSessions = await route('delete-all-sessions');
const deleteCurrentSession = await route('delete-current-session');
const getMe = await route('get-me');
const listPrograms = await route('list-programs');
const putDeal = await route('put-deal');

// A Redis of this file's own, started as the twin starts its own, with a few megabytes to fill.
// The shared clients connect on first use, after this.
const STATE_DIR = `.local/test-out-of-memory-${randomBytes(4).toString('hex')}`;
delete process.env.REDIS_URL;
process.env.SURGE_REDIS_MAXMEMORY = '4mb';
const store = await startRedis(STATE_DIR, false);
process.env.REDIS_URL = store.url;

const sqs = testSqs();
const queue = await ownReservationQueue(sqs);

type Result = APIGatewayProxyStructuredResultV2;
const body = (r: Result) => JSON.parse(r.body ?? 'null');
const HOUR = 3_600_000;
const STOCK = 10;
/** Beyond maxmemory: more than the ups and downs of client buffers, so Redis stays full until the filler goes. */
const FILLER_MARGIN_BYTES = 512 * 1024;
const FILLER = 'filler';
/** The password test/support/factories gives every user. */
const PASSWORD = 'correct horse battery staple';

const usedMemory = async (raw: Redis) => Number(/^used_memory:(\d+)/m.exec(await raw.info('memory'))![1]);

// In order: Redis is full from beforeAll until the last test frees it.
describe('Redis out of memory, evicting nothing', () => {
  let raw: Redis;
  let admin: SignedInUser;
  let buyers: SignedInUser[];
  /** Users who sign out while Redis is full. */
  let leaving: SignedInUser[];
  let itemId: string;
  let dealId: string;
  let poller: Poller;

  const cachedTag = `cached-${randomBytes(3).toString('hex')}`;
  const uncachedTag = `uncached-${randomBytes(3).toString('hex')}`;

  function listCatalog(careerTag: string) {
    const event = httpEvent('get-me', { path: '/programs' });
    event.rawQueryString = `careerTag=${careerTag}`;
    event.queryStringParameters = { careerTag };
    return listPrograms(event, lambdaContext());
  }
  const order = (buyer: SignedInUser, i: number) => createOrder(orderEvent(itemId, buyer.cookie, `full-${i}`, { quantity: 1 }), lambdaContext());
  const coupon = (buyer: SignedInUser) =>
    createCoupon(
      httpEvent('get-me', { method: 'POST', path: `/deals/${dealId}/coupons`, pathParameters: { dealId }, cookies: [buyer.cookie] }),
      lambdaContext(),
    );

  /**
   * A call made as a client makes it once Redis has room again: a 503 (Redis slower than the
   * functions' 1 s on a busy machine) is retry-safe, so it asks again with the same key.
   */
  const asClient = async (call: () => Promise<Result>): Promise<Result> =>
    (await until(
      async () => {
        const result = await call();
        return result.statusCode === 503 ? undefined : result;
      },
      60_000,
      'an answer other than a retry-safe 503',
    ))!;

  async function reservationState() {
    const [stock, buyerCounts, outbox, idempotencyKeys, holders, couponOutbox] = await Promise.all([
      remainingStock(itemId),
      raw.hlen(itemKeys(itemId).buyers),
      raw.hlen(itemKeys(itemId).outbox),
      raw.keys(`{item:${itemId}}:idem:*`),
      raw.hlen(dealKeys(dealId).buyers),
      raw.hlen(dealKeys(dealId).outbox),
    ]);
    return { stock, buyerCounts, outbox, idempotencyKeys: idempotencyKeys.length, holders, couponOutbox, queued: await depth(sqs, queue.url) };
  }

  beforeAll(async () => {
    raw = new Redis(store.url);
    // Everything the attempts need is in Redis before it fills: sessions, the sale, the deal.
    admin = (await signedInUsers(1, 'admin'))[0]!;
    buyers = await signedInUsers(3);
    leaving = await signedInUsers(2);
    itemId = uniqueItemId('full');
    await upsertItemStock(itemId, STOCK, 1);
    await openSale(itemId, STOCK, 1);
    dealId = `deal-${randomBytes(5).toString('hex')}`;
    const deal = await putDeal(
      httpEvent('post-sessions', {
        method: 'PUT',
        path: `/deals/${dealId}`,
        pathParameters: { dealId },
        cookies: [admin.cookie],
        body: { title: 'Full', opensAt: new Date(Date.now() - HOUR).toISOString(), closesAt: new Date(Date.now() + HOUR).toISOString(), limit: STOCK },
      }),
      lambdaContext(),
    );
    expect(deal.statusCode).toBe(200);
    for (const tag of [cachedTag, uncachedTag]) await insertProgram({ title: tag, careerTag: tag, type: 'course', description: '' });
    expect((await listCatalog(cachedTag)).statusCode).toBe(200);
    poller = pollQueue(sqs, queue, (event: SQSEvent) => writeReservations(event, lambdaContext()), {
      maxConcurrency: 1,
      onError: (error) => console.error(error),
    });

    // One write that takes Redis past maxmemory: with noeviction, every write after it is refused.
    expect(await raw.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    const maxmemory = Number(((await raw.config('GET', 'maxmemory')) as string[])[1]);
    expect(maxmemory).toBeGreaterThan(0);
    await raw.setrange(FILLER, maxmemory - (await usedMemory(raw)) + FILLER_MARGIN_BYTES, 'x');
    await expect(raw.set('probe', 'x')).rejects.toThrow(/^OOM /);
  });

  afterAll(async () => {
    await poller?.stop();
    cache().close();
    redis().disconnect();
    raw?.disconnect();
    await store.stop();
    rmSync(STATE_DIR, { recursive: true, force: true });
  });

  it('answers every order 503 to retry with the same key, reserves nothing, and counts the refusals', async () => {
    const before = await reservationState();
    const emf = new EmfCollector();
    const stopReading = onStdoutLine((line) => emf.take(line));

    const results = await Promise.all(Array.from({ length: 30 }, (_, n) => order(buyers[n % buyers.length]!, n % buyers.length)));
    stopReading();

    expect(results.map((r) => r.statusCode)).toEqual(results.map(() => 503));
    expect(new Set(results.map((r) => body(r).error.code))).toEqual(new Set(['UNAVAILABLE']));
    expect(await reservationState()).toEqual(before);
    expect(before).toMatchObject({ stock: STOCK, buyerCounts: 0, outbox: 0, idempotencyKeys: 0, queued: 0 });
    const sums = Object.fromEntries(emf.snapshot().metrics.map((m) => [m.name, m.sum]));
    expect(sums['orders.unavailable']).toBe(30);
    // The reserving script of each: a session's read and slide are plain commands, which a full node runs.
    expect(sums['redis.writeRefused']).toBe(30);
  });

  it('answers a coupon 503, and issues nothing', async () => {
    const before = await reservationState();

    const result = await coupon(buyers[0]!);

    expect(result.statusCode).toBe(503);
    expect(body(result).error.code).toBe('UNAVAILABLE');
    expect(await reservationState()).toEqual(before);
    expect(await raw.hget(dealKeys(dealId).state, 'issued')).toBe('0');
  });

  it('still knows the signed-in: no session was evicted, and reading one still works', async () => {
    const results = await Promise.all([admin, ...buyers].map((u) => getMe(httpEvent('get-me', { cookies: [u.cookie] }), lambdaContext())));

    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    expect(results.map((r) => body(r).id)).toEqual([admin, ...buyers].map((u) => u.id));
  });

  it('answers a sign-in 503, which cannot start a session', async () => {
    const result = await createSession(httpEvent('post-sessions', { body: { email: buyers[0]!.email, password: PASSWORD } }), lambdaContext());

    expect(result.statusCode).toBe(503);
    expect(body(result).error.code).toBe('UNAVAILABLE');
    expect(result.cookies).toBeUndefined();
    expect(await raw.zcard(`{user:${buyers[0]!.id}}:sessions`)).toBe(1);
  });

  it('signs out here and everywhere: deleting a session needs no memory', async () => {
    const me = (user: SignedInUser) => getMe(httpEvent('get-me', { cookies: [user.cookie] }), lambdaContext());
    const [here, everywhere] = leaving as [SignedInUser, SignedInUser];

    const results = await Promise.all([
      deleteCurrentSession(httpEvent('get-me', { method: 'DELETE', path: '/sessions/current', cookies: [here.cookie] }), lambdaContext()),
      deleteAllSessions(httpEvent('get-me', { method: 'DELETE', path: '/sessions', cookies: [everywhere.cookie] }), lambdaContext()),
    ]);

    expect(results.map((r) => r.statusCode)).toEqual([204, 204]);
    expect((await Promise.all([me(here), me(everywhere)])).map((r) => r.statusCode)).toEqual([401, 401]);
    expect(await raw.keys(`{user:${here.id}}:*`)).toEqual([]);
  });

  it('serves a cached catalog page from the cache and an uncached one from MySQL, storing nothing', async () => {
    const [cached, uncached] = await Promise.all([listCatalog(cachedTag), listCatalog(uncachedTag)]);

    expect([cached.statusCode, uncached.statusCode]).toEqual([200, 200]);
    expect(body(cached).items.map((p: { title: string }) => p.title)).toEqual([cachedTag]);
    expect(body(uncached).items.map((p: { title: string }) => p.title)).toEqual([uncachedTag]);
    expect(await raw.keys(`{catalog}:programs:*tag=${uncachedTag}*`)).toEqual([]);
  });

  it('once memory is freed, places the same Idempotency-Keys’ orders and stores each once', async () => {
    await raw.del(FILLER);

    const placed = await Promise.all(buyers.map((b, i) => asClient(() => order(b, i))));
    const replayed = await Promise.all(buyers.map((b, i) => asClient(() => order(b, i))));
    const issued = await asClient(() => coupon(buyers[0]!));
    await until(async () => (await orderRows(itemId)).length === buyers.length, 60_000, 'orders stored');
    await until(async () => (await depth(sqs, queue.url)) === 0, 60_000, 'queue drained');

    expect(placed.map((r) => r.statusCode)).toEqual(buyers.map(() => 202));
    // The same orders: a replay answers each one's status now, pending or, once stored, confirmed.
    expect(replayed.map(body)).toEqual(placed.map((r) => ({ ...body(r), status: expect.stringMatching(/^(pending|confirmed)$/) })));
    expect(issued.statusCode).toBe(201);
    const rows = await orderRows(itemId);
    expect(rows.map((r) => r.id).sort()).toEqual(placed.map((r) => body(r).orderId).sort());
    expect(rows.every((r) => r.status === 'confirmed')).toBe(true);
    expect(await remainingStock(itemId)).toBe(STOCK - buyers.length);
    await until(async () => (await sql('SELECT id FROM coupons WHERE deal_id = ?', [dealId])).length === 1, 60_000, 'coupon stored');
  });
});
