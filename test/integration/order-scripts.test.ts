import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/clients/redis';
import { itemKeys } from '../../shared/orders/model';
import { claimPending, pendingRecords, settleWritten } from '../../shared/outbox/outbox';
import { openSale, release, remainingStock, reserve, resetStock } from '../../shared/orders/reservations';

const claim = (itemId: string, ids: string[]) => claimPending(itemKeys(itemId), ids);
const settle = (itemId: string, ids: string[]) => settleWritten(itemKeys(itemId), ids);
const outbox = (itemId: string) => pendingRecords(itemKeys(itemId));
import { uniqueItemId } from '../support/orders';

const USER = 7;

async function itemState(itemId: string) {
  const keys = itemKeys(itemId);
  const [stock, bought, pending, claimed, idempotency] = await Promise.all([
    remainingStock(itemId),
    redis().hgetall(keys.bought),
    redis().hlen(keys.outbox),
    redis().smembers(keys.claimed),
    redis().keys(`${keys.idempotency(USER, '')}*`),
  ]);
  return { stock, bought, pending, claimed, idempotency: idempotency.length };
}

async function saleOf(stock: number, limit = 5) {
  const itemId = uniqueItemId('script');
  await openSale(itemId, stock, limit);
  return itemId;
}

describe('order-reserve', () => {
  it('decrements stock, counts the buyer, stores the idempotency record and the outbox entry', async () => {
    const itemId = await saleOf(10);

    const result = await reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k1' });

    expect(result).toMatchObject({ remaining: 7, replayed: false, order: { itemId, userId: USER, quantity: 3 } });
    expect(await itemState(itemId)).toEqual({ stock: 7, bought: { [USER]: '3' }, pending: 1, claimed: [], idempotency: 1 });
    expect(await outbox(itemId)).toEqual([result.order]);
  });

  it('replays a retry with the same key and payload without writing again', async () => {
    const itemId = await saleOf(10);
    const first = await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1' });

    const again = await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1' });

    expect(again).toMatchObject({ replayed: true, remaining: 8, order: { orderId: first.order.orderId } });
    expect(await itemState(itemId)).toMatchObject({ stock: 8, bought: { [USER]: '2' }, pending: 1 });
  });

  it('refuses the same key with a different payload, writing nothing', async () => {
    const itemId = await saleOf(10);
    await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1' });
    const before = await itemState(itemId);

    await expect(reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'k1' })).rejects.toMatchObject({ code: 'IDEMPOTENCY_MISMATCH' });

    expect(await itemState(itemId)).toEqual(before);
  });

  it('refuses past the per-buyer limit, writing nothing', async () => {
    const itemId = await saleOf(10, 3);
    await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1' });
    const before = await itemState(itemId);

    await expect(reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k2' })).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });

    expect(await itemState(itemId)).toEqual(before);
  });

  it('refuses more than the remaining stock, and writes no key at all once stock is 0', async () => {
    const itemId = await saleOf(2);
    await expect(reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k1' })).rejects.toMatchObject({ code: 'SOLD_OUT' });
    await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k2' });
    const keysBefore = (await redis().keys(`{item:${itemId}}*`)).sort();

    await expect(reserve({ itemId, userId: 99, quantity: 1, idempotencyKey: 'k3' })).rejects.toMatchObject({ code: 'SOLD_OUT' });

    expect((await redis().keys(`{item:${itemId}}*`)).sort()).toEqual(keysBefore);
    expect(await remainingStock(itemId)).toBe(0);
  });

  it('answers NOT_ON_SALE for an item without a sale', async () => {
    await expect(reserve({ itemId: uniqueItemId(), userId: USER, quantity: 1, idempotencyKey: 'k' })).rejects.toMatchObject({ code: 'NOT_ON_SALE' });
  });
});

describe('order-release', () => {
  it('restores stock and the buyer, forgets the key, never twice, and a second run reports what the first did', async () => {
    const itemId = await saleOf(10);
    const { order } = await reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k1' });

    const first = await release(order, 'k1');
    const second = await release(order, 'k1');

    // ioredis sends a release again when its reply was lost: that run must not read as "the writer has it".
    expect([first, second]).toEqual([true, true]);
    expect(await itemState(itemId)).toEqual({ stock: 10, bought: {}, pending: 0, claimed: [], idempotency: 0 });
  });

  it('refuses once the writer has claimed the order', async () => {
    const itemId = await saleOf(10);
    const { order } = await reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k1' });
    await claim(itemId, [order.orderId]);

    expect(await release(order, 'k1')).toBe(false);
    expect(await itemState(itemId)).toMatchObject({ stock: 7, pending: 1, claimed: [order.orderId] });
  });
});

describe('a replay and a failed send racing', () => {
  it('keeps an order a replay has already confirmed, even if its first request then fails to send', async () => {
    // Prepare: the first request reserved and is still sending when the client retries.
    const itemId = await saleOf(10);
    const first = await reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'k' });
    const replay = await reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'k' });

    // Act: the first request's send fails and it tries to compensate.
    const released = await release(first.order, 'k');

    // Assess: the order the replay answered with still stands, pending for the relay or writer.
    expect(replay).toMatchObject({ replayed: true, order: { orderId: first.order.orderId } });
    expect(released).toBe(false);
    expect(await itemState(itemId)).toMatchObject({ stock: 9, pending: 1, claimed: [first.order.orderId] });
  });
});

describe('order-claim and settle', () => {
  it('claims pending orders only, and settling clears them', async () => {
    const itemId = await saleOf(10);
    const kept = await reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'a' });
    const compensated = await reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'b' });
    await release(compensated.order, 'b');

    const pending = await claim(itemId, [kept.order.orderId, compensated.order.orderId, `${itemId}.unknown`]);
    await settle(itemId, [...pending]);

    expect([...pending]).toEqual([kept.order.orderId]);
    expect(await itemState(itemId)).toMatchObject({ pending: 0, claimed: [] });
  });
});

describe('sale-open and sale-stock-reset', () => {
  it('refuses to reset a sale that has reservations', async () => {
    const itemId = await saleOf(10);
    await reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'a' });

    await expect(openSale(itemId, 50, 5)).rejects.toMatchObject({ code: 'SALE_STARTED' });
    expect(await remainingStock(itemId)).toBe(9);
  });

  it('resets stock only if it has not moved since it was measured', async () => {
    const itemId = await saleOf(10);

    expect(await resetStock(itemId, 9, 5)).toBe(false);
    expect(await resetStock(itemId, 10, 5)).toBe(true);
    expect(await remainingStock(itemId)).toBe(5);
  });
});

describe('keys', () => {
  it('share one hash tag per item, so each script runs in one cluster slot', () => {
    const keys = itemKeys('abc');
    const all = [keys.sale, keys.bought, keys.outbox, keys.claimed, keys.idempotency(1, 'k')];

    for (const key of all) expect(/\{([^}]*)\}/.exec(key)![1]).toBe('item:abc');
  });
});
