import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2, SQSEvent } from 'aws-lambda';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Poller } from '../../../infra/twin/events/poller';
import { redis } from '../../../shared/platform/clients/redis';
import { upsertItemStock } from '../../../shared/sale/orders/items';
import { encodeHandOffs } from '../../../shared/reservations/hand-off';
import { itemKeys, type OrderRecord } from '../../../shared/sale/orders/model';
import { openSale, remainingStock, reserve } from '../../../shared/sale/orders/sale';
import { orderDecisions } from '../../../shared/sale/orders/kind';
import { decideFirst } from '../../../shared/reservations/ledger';
import { httpEvent, lambdaContext } from '../../support/events';
import { getOrderEvent, orderEvent } from '../../support/order-events';
import { orderRows, soldCount, sql, uniqueItemId } from '../../support/orders';
import { LOCAL_SOURCE } from '../../../infra/twin/load-test-sources';
import { depth, ownReservationQueue, pollQueue, testSqs } from '../../support/queues';
import { signedInUsers, type SignedInUser } from '../../support/sessions';
import { until } from '../../../shared/platform/wait';
import { literalPattern } from '../../support/keys';
import { handler as writeReservations } from '../../../functions/write-reservations';
import { keysMatching } from '../../support/redis-nodes';
import { route } from '../../support/routes';

const createOrder = await route('create-order');
const getOrder = await route('get-order');
const putItemStock = await route('put-item-stock');

const sqs = testSqs();
const queue = await ownReservationQueue(sqs);

type Result = APIGatewayProxyStructuredResultV2;
const body = (r: Result) => JSON.parse(r.body ?? 'null');

async function openItem(stock: number, perUserLimit = 1): Promise<string> {
  const itemId = uniqueItemId('order');
  await upsertItemStock(itemId, stock, perUserLimit);
  await openSale(itemId, stock, perUserLimit);
  return itemId;
}

async function redisState(itemId: string) {
  const keys = itemKeys(itemId);
  const [stock, bought, pending, all] = await Promise.all([
    remainingStock(itemId),
    redis().hlen(keys.buyers),
    redis().hlen(keys.outbox),
    keysMatching(`{item:${itemId}}*`),
  ]);
  return { stock, bought, pending, keys: all.sort() };
}

describe('flash-sale orders', () => {
  let poller: Poller;
  let buyers: SignedInUser[];

  beforeAll(async () => {
    buyers = await signedInUsers(2_000);
    poller = pollQueue(sqs, queue, (event: SQSEvent) => writeReservations(event, lambdaContext()), {
      maxConcurrency: 2,
      onError: (error) => console.error(error),
    });
  });
  afterAll(() => poller.stop());

  it('sells 1,000 units to exactly 1,000 of 2,000 concurrent buyers, and stores each once', async () => {
    // Prepare
    const itemId = await openItem(1_000);

    // Act
    const results = await Promise.all(buyers.map((b, i) => createOrder(orderEvent(itemId, b.cookie, `buy-${i}`, { quantity: 1 }), lambdaContext())));
    const accepted = results.filter((r) => r.statusCode === 202).map(body);
    const refused = results.filter((r) => r.statusCode === 409).map((r) => body(r).error.code);
    await until(async () => (await orderRows(itemId)).length === 1_000, 60_000, '1,000 rows');

    // Assess
    expect(accepted).toHaveLength(1_000);
    expect(new Set(refused)).toEqual(new Set(['SOLD_OUT']));
    expect(refused).toHaveLength(1_000);
    expect(await remainingStock(itemId)).toBe(0);
    const rows = await orderRows(itemId);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(accepted.map((a) => a.orderId)));
    expect(new Set(rows.map((r) => r.user_id)).size).toBe(1_000);
    expect(rows.every((r) => r.status === 'confirmed')).toBe(true);
    expect(await soldCount(itemId)).toBe(1_000);
    await until(async () => (await redis().hlen(itemKeys(itemId).outbox)) === 0, 60_000, 'outbox drained');
  });

  it('stores nothing twice when every message is delivered twice', async () => {
    // Prepare: orders written once…
    const itemId = await openItem(30);
    const placed = await Promise.all(
      buyers.slice(0, 30).map((b, i) => createOrder(orderEvent(itemId, b.cookie, `twice-${i}`, { quantity: 1 }), lambdaContext())),
    );
    await until(async () => (await orderRows(itemId)).length === 30, 60_000, '30 rows');
    const before = await orderRows(itemId);

    // Act: …then each of their messages arrives again.
    const records: OrderRecord[] = placed.map((r, i) => ({ orderId: body(r).orderId, itemId, userId: buyers[i]!.id, quantity: 1, reservedAt: Date.now() }));
    for (let i = 0; i < records.length; i += 10) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queue.url,
          Entries: records.slice(i, i + 10).map((r, n) => ({ Id: String(n), MessageBody: encodeHandOffs([{ kind: 'orders', record: r }]) })),
        }),
      );
    }
    await until(async () => (await depth(sqs, queue.url)) === 0, 60_000, 'queue drained');

    // Assess
    expect(await orderRows(itemId)).toEqual(before);
    expect(await soldCount(itemId)).toBe(30);
  });

  it('replays a retry with the same Idempotency-Key and refuses a different payload under it', async () => {
    const itemId = await openItem(10, 5);
    const buyer = buyers[0]!;

    const first = await createOrder(orderEvent(itemId, buyer.cookie, 'same-key', { quantity: 2 }), lambdaContext());
    const retry = await createOrder(orderEvent(itemId, buyer.cookie, 'same-key', { quantity: 2 }), lambdaContext());
    const other = await createOrder(orderEvent(itemId, buyer.cookie, 'same-key', { quantity: 3 }), lambdaContext());

    expect(first.statusCode).toBe(202);
    expect(body(retry)).toEqual({ ...body(first), status: expect.stringMatching(/^(pending|confirmed)$/) });
    expect(other.statusCode).toBe(409);
    expect(body(other).error.code).toBe('IDEMPOTENCY_MISMATCH');
    expect(await remainingStock(itemId)).toBe(8);
  });

  it('answers a retry of an order the writer stored with the status it stored, not pending', async () => {
    // Prepare: an order placed and confirmed.
    const itemId = await openItem(10);
    const buyer = buyers[3]!;
    const first = body(await createOrder(orderEvent(itemId, buyer.cookie, 'stored-key', { quantity: 1 }), lambdaContext()));
    await until(async () => (await orderRows(itemId)).length === 1, 60_000, 'row');

    // Act
    const retry = await createOrder(orderEvent(itemId, buyer.cookie, 'stored-key', { quantity: 1 }), lambdaContext());

    // Assess
    expect(first.status).toBe('pending');
    expect(retry.statusCode).toBe(202);
    expect(body(retry)).toEqual({ orderId: first.orderId, status: 'confirmed', remaining: first.remaining });
    expect(await remainingStock(itemId)).toBe(9);
  });

  it('shows an order to its owner, pending and then confirmed, and to no one else', async () => {
    const itemId = await openItem(5);
    const [owner, stranger] = [buyers[1]!, buyers[2]!];
    const placed = body(await createOrder(orderEvent(itemId, owner.cookie, 'mine', { quantity: 1 }), lambdaContext()));

    const early = await getOrder(getOrderEvent(placed.orderId, owner.cookie), lambdaContext());
    await until(async () => (await orderRows(itemId)).length === 1, 60_000, 'row');
    const later = await getOrder(getOrderEvent(placed.orderId, owner.cookie), lambdaContext());
    const foreign = await getOrder(getOrderEvent(placed.orderId, stranger.cookie), lambdaContext());

    expect(['pending', 'confirmed']).toContain(body(early).status);
    expect(body(later)).toEqual({ orderId: placed.orderId, itemId, quantity: 1, status: 'confirmed' });
    expect(foreign.statusCode).toBe(404);
    expect(body(foreign).error.code).toBe('NOT_FOUND');
  });

  it("answers from the order's row when Redis no longer has it: a promised order is pending, a cancelled one cancelled", async () => {
    // Prepare: two reservations Redis then lost from its outbox, one promised to a retry, one cancelled by its compensation.
    const itemId = await openItem(5);
    const [promisedBuyer, cancelledBuyer] = [buyers[3]!, buyers[4]!];
    const promised = await reserve({ itemId, userId: promisedBuyer.id, quantity: 1, idempotencyKey: 'promised', source: LOCAL_SOURCE });
    const cancelled = await reserve({ itemId, userId: cancelledBuyer.id, quantity: 1, idempotencyKey: 'cancelled', source: LOCAL_SOURCE });
    await decideFirst(orderDecisions, promised.record, 'promised');
    await decideFirst(orderDecisions, cancelled.record, 'cancelled');
    await redis().del(itemKeys(itemId).outbox);

    // Act
    const [promisedView, cancelledView] = await Promise.all([
      getOrder(getOrderEvent(promised.record.orderId, promisedBuyer.cookie), lambdaContext()),
      getOrder(getOrderEvent(cancelled.record.orderId, cancelledBuyer.cookie), lambdaContext()),
    ]);

    // Assess
    expect(body(promisedView)).toEqual({ orderId: promised.record.orderId, itemId, quantity: 1, status: 'pending' });
    expect(body(cancelledView)).toEqual({ orderId: cancelled.record.orderId, itemId, quantity: 1, status: 'cancelled' });
  });

  it('refuses to reset a sale whose reservations are still pending, leaving MySQL as it was', async () => {
    // Prepare: a reservation that exists in Redis only (reserved, not yet handed off or stored).
    const itemId = await openItem(10, 5);
    await reserve({ itemId, userId: buyers[8]!.id, quantity: 1, idempotencyKey: 'pending', source: LOCAL_SOURCE });
    const [admin] = await signedInUsers(1, 'admin');

    // Act
    const result = await putItemStock(
      httpEvent('post-sessions', {
        method: 'PUT',
        path: `/items/${itemId}/stock`,
        pathParameters: { itemId },
        cookies: [admin!.cookie],
        body: { quantity: 3, perUserLimit: 1 },
      }),
      lambdaContext(),
    );

    // Assess
    expect(result.statusCode).toBe(409);
    expect(body(result).error.code).toBe('SALE_STARTED');
    expect((await sql<RowDataPacket>('SELECT initial_stock FROM items WHERE id = ?', [itemId]))[0]!.initial_stock).toBe(10);
  });

  describe('bad input gets a 4xx and changes nothing', () => {
    let itemId: string;
    let before: Awaited<ReturnType<typeof redisState>>;

    beforeAll(async () => {
      itemId = await openItem(10, 5);
      before = await redisState(itemId);
    });

    it.each([
      ['quantity as a string', { quantity: '1' }, 'k-1'],
      ['quantity 0', { quantity: 0 }, 'k-2'],
      ['a negative quantity', { quantity: -1 }, 'k-3'],
      ['a fractional quantity', { quantity: 1.5 }, 'k-4'],
      ['a huge quantity', { quantity: 1e9 }, 'k-5'],
      ['an unknown field (a user id in the body)', { quantity: 1, userId: 1 }, 'k-6'],
      ['no Idempotency-Key', { quantity: 1 }, undefined],
      ['an empty Idempotency-Key', { quantity: 1 }, ''],
      ['an oversized Idempotency-Key', { quantity: 1 }, 'k'.repeat(65)],
      ['an Idempotency-Key with Lua in it', { quantity: 1 }, "x') redis().call('FLUSHALL') --"],
    ])('%s', async (_, payload, key) => {
      const result = await createOrder(orderEvent(itemId, buyers[3]!.cookie, key, payload), lambdaContext());

      expect(result.statusCode).toBe(400);
      expect(body(result).error.code).toBe('VALIDATION_FAILED');
      expect(await redisState(itemId)).toEqual(before);
    });

    it.each(['{item}', 'it*', "x'..redis.call('FLUSHALL')..'", 'a'.repeat(65), 'white space'])('an item id like %j', async (badId) => {
      const result = await createOrder(orderEvent(badId, buyers[3]!.cookie, 'k-7', { quantity: 1 }), lambdaContext());

      expect(result.statusCode).toBe(400);
      expect(await keysMatching(`${literalPattern(`{item:${badId}}`)}*`)).toEqual([]);
      expect(await redisState(itemId)).toEqual(before);
    });

    it('refuses without a session', async () => {
      const result = await createOrder(orderEvent(itemId, 'sid=1.AAAAAAAAAAAAAAAAAAAAAA', 'k-8', { quantity: 1 }), lambdaContext());

      expect(result.statusCode).toBe(401);
      expect(await redisState(itemId)).toEqual(before);
    });

    it('answers a malformed order id with 400 and an unknown one with 404', async () => {
      const malformed = await getOrder(getOrderEvent('{x}*', buyers[3]!.cookie), lambdaContext());
      const unknown = await getOrder(getOrderEvent(`${itemId}.000000000AAAAAAAAAAAAAA`, buyers[3]!.cookie), lambdaContext());

      expect(malformed.statusCode).toBe(400);
      expect(unknown.statusCode).toBe(404);
    });
  });
});
