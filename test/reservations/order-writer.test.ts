import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it, onTestFinished } from 'vitest';
import { handler as writeReservations } from '../../functions/write-reservations';
import { redis } from '../../shared/platform/clients/redis';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { CORRELATION_ATTRIBUTE, encodeCorrelationIds, encodeHandOffs, type HandOff } from '../../shared/reservations/hand-off';
import { itemKeys, type OrderRecord } from '../../shared/sale/orders/model';
import { openSale, reserve } from '../../shared/sale/orders/sale';
import { fixture, lambdaContext } from '../support/events';
import type { RowDataPacket } from 'mysql2/promise';
import { orderRows, soldCount, sql, uniqueItemId } from '../support/orders';
import { orderDecisions } from '../../shared/sale/orders/kind';
import { decideFirst } from '../../shared/reservations/ledger';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';
import { depth, pollQueue, queueWithDeadLetters, testSqs } from '../support/queues';
import { until } from '../../shared/platform/wait';
import { captureLog, loggedDecision, loggedReservation } from '../support/logs';
import { kindsUnderTest } from '../support/reservations';
import { poolConnectionIds, verbOf } from '../support/database';
import { statementsOverDuring } from '../../infra/twin/faults/query-log';

async function saleWithReservations(count: number, options: { dbStock?: number; redisStock?: number; withItemRow?: boolean } = {}) {
  const itemId = uniqueItemId('writer');
  const redisStock = options.redisStock ?? count;
  if (options.withItemRow !== false) await upsertItemStock(itemId, options.dbStock ?? redisStock, 100);
  await openSale(itemId, redisStock, 100);
  const orders: OrderRecord[] = [];
  for (let i = 0; i < count; i++)
    orders.push((await reserve({ itemId, userId: 1_000 + i, quantity: 1, idempotencyKey: `k${i}`, source: LOCAL_SOURCE })).record);
  return { itemId, orders };
}

function sqsEventFor(bodies: string[]): SQSEvent {
  const template = fixture<SQSEvent>('sqs/order-records.json').Records[0]!;
  return { Records: bodies.map((body, i) => ({ ...template, messageId: `m-${i}`, body })) };
}

/** A batch of one message per list of hand-offs, with its requests' correlation ids, as the queue's sender attaches them. */
function sqsEventOf(messages: HandOff[][]): SQSEvent {
  const event = sqsEventFor(messages.map(encodeHandOffs));
  for (const [i, record] of event.Records.entries()) {
    const ids = encodeCorrelationIds(messages[i]!);
    record.messageAttributes = ids ? { [CORRELATION_ATTRIBUTE]: { dataType: 'String', stringValue: ids } } : {};
  }
  return event;
}

const handOffOf = (order: OrderRecord, correlationId?: string): HandOff => ({
  kind: 'orders',
  record: order,
  ...(correlationId ? { correlation: { id: order.orderId, correlationId } } : {}),
});

describe('the order writer', () => {
  it('fails a malformed record alone and writes the rest of its batch', async () => {
    // Prepare: the recorded event's second record is malformed; its first is made a real reservation.
    const { itemId, orders } = await saleWithReservations(1);
    const event = fixture<SQSEvent>('sqs/order-records.json');
    event.Records[0]!.body = encodeHandOffs([{ kind: 'orders', record: orders[0]! }]);

    // Act
    const result = await writeReservations(event, lambdaContext());

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: event.Records[1]!.messageId }] });
    expect((await orderRows(itemId)).map((r) => r.id)).toEqual([orders[0]!.orderId]);
    expect(await redis().hlen(itemKeys(itemId).outbox)).toBe(0);
  });

  it('falls back to one write per record and fails only the record that cannot be written', async () => {
    const good = await saleWithReservations(2);
    const orphan = await saleWithReservations(1, { withItemRow: false });

    const result = await writeReservations(
      sqsEventFor([...good.orders, ...orphan.orders].map((o) => encodeHandOffs([{ kind: 'orders', record: o }]))),
      lambdaContext(),
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-2' }] });
    expect(await orderRows(good.itemId)).toHaveLength(2);
    expect(await redis().hlen(itemKeys(orphan.itemId).outbox)).toBe(1);
  });

  it('stores an order that would oversell as rejected, even when Redis let it through', async () => {
    // Redis believes in 5 units, MySQL's initial stock is 3: Redis lost writes.
    const { itemId, orders } = await saleWithReservations(5, { dbStock: 3, redisStock: 5 });

    const result = await writeReservations(sqsEventFor([encodeHandOffs(orders.map((order) => ({ kind: 'orders', record: order })))]), lambdaContext());

    expect(result.batchItemFailures).toEqual([]);
    const rows = await orderRows(itemId);
    expect(rows.filter((r) => r.status === 'confirmed')).toHaveLength(3);
    expect(rows.filter((r) => r.status === 'rejected')).toHaveLength(2);
    expect(await soldCount(itemId)).toBe(3);
  });

  it("keeps an order's decision in its own row: one row per order, a promise decided in place, and in this release the same in the ledger (0014's bridge)", async () => {
    // Prepare: one order promised to a retry before the writer sees it, one undecided.
    const { itemId, orders } = await saleWithReservations(2);
    await decideFirst(orderDecisions, orders[0]!, 'promised');

    // Act
    const result = await writeReservations(sqsEventFor([encodeHandOffs(orders.map((order) => ({ kind: 'orders', record: order })))]), lambdaContext());

    // Assess
    expect(result.batchItemFailures).toEqual([]);
    const rows = await sql<RowDataPacket>('SELECT id, status FROM orders WHERE item_id = ? ORDER BY id', [itemId]);
    expect(rows.map((r) => ({ ...r }))).toEqual(orders.map((o) => ({ id: o.orderId, status: 'confirmed' })).sort((a, b) => (a.id < b.id ? -1 : 1)));
    const ledger = await sql<RowDataPacket>('SELECT id, state FROM reservation_ledger WHERE owner_id = ? ORDER BY id', [itemId]);
    expect(ledger.map((r) => ({ ...r }))).toEqual(orders.map((o) => ({ id: o.orderId, state: 'confirmed' })).sort((a, b) => (a.id < b.id ? -1 : 1)));
    expect(await soldCount(itemId)).toBe(2);
  });

  it('stores a batch of new orders in eight statements (six, and two for 0014’s bridge), and one already decided under lock after a rolled-back first attempt', async () => {
    // Prepare: one order of the sale stored already, so the writer has looked at (and repaired) the sale on this connection.
    const { itemId, orders } = await saleWithReservations(4);
    const batchOf = (records: OrderRecord[]) => sqsEventFor([encodeHandOffs(records.map((order) => ({ kind: 'orders', record: order })))]);
    await writeReservations(batchOf(orders.slice(0, 1)), lambdaContext());
    const event = batchOf(orders.slice(1));
    const ours = await poolConnectionIds();

    // Act: the batch, then the same batch again, its outbox entries back as if their settle had been lost.
    const first = await statementsOverDuring(process.env.DATABASE_URL!, ours, () => writeReservations(event, lambdaContext()));
    for (const order of orders.slice(1)) await redis().hset(itemKeys(itemId).outbox, order.orderId, JSON.stringify(order));
    const again = await statementsOverDuring(process.env.DATABASE_URL!, ours, () => writeReservations(event, lambdaContext()));

    // Assess: no read of the orders' own rows when none was decided (the ledger's are read and
    // written for the bridge); the redelivery finds them all decided in the ledger and adds nothing.
    expect(first.map(verbOf)).toEqual(['START', 'SELECT', 'SELECT', 'SELECT', 'INSERT', 'UPDATE', 'INSERT', 'COMMIT']);
    expect(again.map(verbOf)).toEqual(['START', 'SELECT', 'SELECT', 'ROLLBACK', 'START', 'SELECT', 'SELECT', 'SELECT', 'COMMIT']);
    expect(await orderRows(itemId)).toHaveLength(4);
    expect(await soldCount(itemId)).toBe(4);
  });

  it('stores a batch whose statements pass 16 KB, then closes the connection that sent them, which RDS Proxy would keep pinned', async () => {
    // Prepare: 200 orders in two messages of 100, whose batch goes in one multi-row INSERT of ~24 KB.
    const { itemId, orders } = await saleWithReservations(200);
    const messages = [orders.slice(0, 100), orders.slice(100)].map((part) => encodeHandOffs(part.map((order) => ({ kind: 'orders', record: order }))));
    const before = await poolConnectionIds();

    // Act
    const result = await writeReservations(sqsEventFor(messages), lambdaContext());

    // Assess
    expect(result.batchItemFailures).toEqual([]);
    expect(await orderRows(itemId)).toHaveLength(200);
    expect(await soldCount(itemId)).toBe(200);
    const after = await poolConnectionIds();
    expect(before.filter((id) => !after.includes(id))).toHaveLength(1);
  });

  it('counts each order once when its message comes twice in one batch', async () => {
    const { itemId, orders } = await saleWithReservations(2);
    const bodies = orders.map((o) => encodeHandOffs([{ kind: 'orders', record: o }]));

    const result = await writeReservations(sqsEventFor([...bodies, ...bodies]), lambdaContext());

    expect(result.batchItemFailures).toEqual([]);
    expect(await orderRows(itemId)).toHaveLength(2);
    expect(await soldCount(itemId)).toBe(2);
  });

  it('adds nothing when orders already stored come back pending (their settle was lost)', async () => {
    // Prepare: stored once, then their outbox entries reappear, as if settling had failed after the commit.
    const { itemId, orders } = await saleWithReservations(3);
    const event = sqsEventFor([encodeHandOffs(orders.map((order) => ({ kind: 'orders', record: order })))]);
    await writeReservations(event, lambdaContext());
    const before = await orderRows(itemId);
    for (const order of orders) await redis().hset(itemKeys(itemId).outbox, order.orderId, JSON.stringify(order));

    // Act
    const result = await writeReservations(event, lambdaContext());

    // Assess
    expect(result.batchItemFailures).toEqual([]);
    expect(await orderRows(itemId)).toEqual(before);
    expect(await soldCount(itemId)).toBe(3);
    expect(await redis().hlen(itemKeys(itemId).outbox)).toBe(0);
  });

  it('lets a malformed message reach the DLQ after 5 receives without holding back the others', async () => {
    // Prepare
    const sqs = testSqs();
    const queue = await queueWithDeadLetters(sqs, 5, 1);
    const { itemId, orders } = await saleWithReservations(3);
    const bodies = ['{"orders":[{"orderId":', ...orders.map((o) => encodeHandOffs([{ kind: 'orders', record: o }]))];
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: queue.url, Entries: bodies.map((b, i) => ({ Id: String(i), MessageBody: b })) }));

    // Act
    const poller = pollQueue(sqs, queue, (event: SQSEvent) => writeReservations(event, lambdaContext()));
    await until(async () => (await orderRows(itemId)).length === 3, 60_000, 'good orders written');
    const writtenWhileMalformedWasRetried = await depth(sqs, queue.url);
    await until(async () => (await depth(sqs, queue.dlqUrl)) === 1, 60_000, 'malformed message in the DLQ');
    await poller.stop();

    // Assess
    expect(writtenWhileMalformedWasRetried).toBe(1);
    expect(await depth(sqs, queue.url)).toBe(0);
  });

  describe('its log', () => {
    it('is one line per batch, where each decision is found by its id and by its correlation id', async () => {
      // Prepare: two messages; MySQL has stock for two of the three orders (one is rejected); one order was relayed, with no correlation id.
      const { itemId, orders } = await saleWithReservations(3, { dbStock: 2, redisStock: 3 });
      const coupons = kindsUnderTest.find((t) => t.kind.name === 'coupons')!;
      const coupon = (await coupons.reserve(await coupons.open(1), 7)).record;
      const couponId = coupons.kind.idOf(coupon);
      const event = sqsEventOf([
        [handOffOf(orders[0]!, 'checkout-0'), handOffOf(orders[1]!, 'checkout-1')],
        [handOffOf(orders[2]!), { kind: 'coupons', record: coupon, correlation: { id: couponId, correlationId: 'coupon-7' } }],
      ]);
      const log = captureLog();
      onTestFinished(() => log.stop());

      // Act
      await writeReservations(event, lambdaContext());

      // Assess
      const lines = log.lines();
      const status = new Map((await orderRows(itemId)).map((r) => [String(r.id), String(r.status)]));
      expect([...status.values()].sort()).toEqual(['confirmed', 'confirmed', 'rejected']);
      expect(lines.filter((line) => [...orders.map((o) => o.orderId), couponId].some((id) => line.includes(id)))).toHaveLength(1);
      expect(orders.map((o) => loggedDecision(lines, o.orderId))).toEqual([
        { state: status.get(orders[0]!.orderId), correlationId: 'checkout-0' },
        { state: status.get(orders[1]!.orderId), correlationId: 'checkout-1' },
        { state: status.get(orders[2]!.orderId) },
      ]);
      expect(loggedDecision(lines, couponId)).toEqual({ state: 'confirmed', correlationId: 'coupon-7' });
      expect(loggedReservation(lines, 'checkout-1')).toEqual({ id: orders[1]!.orderId, state: status.get(orders[1]!.orderId) });
      expect(loggedReservation(lines, 'coupon-7')).toEqual({ id: couponId, state: 'confirmed' });
    });

    it('splits a batch of more than 250 decisions into lines of at most 250', async () => {
      // Prepare: 300 orders in three messages of 100, the most of a kind a message may carry.
      const { orders } = await saleWithReservations(300);
      const event = sqsEventOf([0, 100, 200].map((from) => orders.slice(from, from + 100).map((o) => handOffOf(o, `checkout-${o.userId}`))));
      const log = captureLog();
      onTestFinished(() => log.stop());

      // Act
      await writeReservations(event, lambdaContext());

      // Assess
      const lines = log.lines().filter((line) => orders.some((o) => line.includes(o.orderId)));
      expect(lines.map((line) => orders.filter((o) => line.includes(o.orderId)).length)).toEqual([250, 50]);
      expect(orders.filter((o) => loggedDecision(lines, o.orderId)?.correlationId !== `checkout-${o.userId}`)).toEqual([]);
    });
  });
});
