import { describe, expect, it } from 'vitest';
import { redis } from '../../../shared/platform/clients/redis';
import { itemKeys } from '../../../shared/sale/orders/model';
import { openSale, release, remainingStock, reserve } from '../../../shared/sale/orders/sale';
import { uniqueItemId } from '../../support/orders';
import { LOCAL_SOURCE } from '../../../infra/twin/load-test-sources';
import { keysMatching } from '../../support/redis-nodes';

const outbox = async (itemId: string) => (await redis().hvals(itemKeys(itemId).outbox)).map((raw) => JSON.parse(raw));

const USER = 7;

async function itemState(itemId: string) {
  const keys = itemKeys(itemId);
  const [stock, bought, pending, idempotency] = await Promise.all([
    remainingStock(itemId),
    redis().hgetall(keys.buyers),
    redis().hlen(keys.outbox),
    keysMatching(`${keys.idempotency(USER, '')}*`),
  ]);
  return { stock, bought, pending, idempotency: idempotency.length };
}

async function saleOf(stock: number, limit = 5) {
  const itemId = uniqueItemId('script');
  await openSale(itemId, stock, limit);
  return itemId;
}

describe('order-reserve', () => {
  it('decrements stock, counts the buyer, stores the idempotency record and the outbox entry', async () => {
    const itemId = await saleOf(10);

    const result = await reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k1', source: LOCAL_SOURCE });

    expect(result).toMatchObject({ remaining: 7, replayed: false, pending: true, record: { itemId, userId: USER, quantity: 3, idempotencyKey: 'k1' } });
    expect(await itemState(itemId)).toEqual({ stock: 7, bought: { [USER]: '3' }, pending: 1, idempotency: 1 });
    expect(await outbox(itemId)).toEqual([result.record]);
  });

  it('replays a retry with the same key and payload without writing again, and says whether it is still pending', async () => {
    const itemId = await saleOf(10);
    const first = await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1', source: LOCAL_SOURCE });

    const again = await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1', source: LOCAL_SOURCE });
    await redis().hdel(itemKeys(itemId).outbox, first.record.orderId);
    const stored = await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1', source: LOCAL_SOURCE });

    expect(again).toMatchObject({ replayed: true, pending: true, remaining: 8, record: { orderId: first.record.orderId } });
    expect(stored).toMatchObject({ replayed: true, pending: false, record: { orderId: first.record.orderId } });
    expect(await itemState(itemId)).toMatchObject({ stock: 8, bought: { [USER]: '2' } });
  });

  it('refuses the same key with a different payload, writing nothing', async () => {
    const itemId = await saleOf(10);
    await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1', source: LOCAL_SOURCE });
    const before = await itemState(itemId);

    await expect(reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'k1', source: LOCAL_SOURCE })).rejects.toMatchObject({
      code: 'IDEMPOTENCY_MISMATCH',
    });

    expect(await itemState(itemId)).toEqual(before);
  });

  it('refuses past the per-buyer limit, writing nothing', async () => {
    const itemId = await saleOf(10, 3);
    await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k1', source: LOCAL_SOURCE });
    const before = await itemState(itemId);

    await expect(reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k2', source: LOCAL_SOURCE })).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });

    expect(await itemState(itemId)).toEqual(before);
  });

  it('refuses a first order above the per-buyer limit or the stock, leaving the buyer uncounted', async () => {
    const itemId = await saleOf(10, 3);

    const overLimit = reserve({ itemId, userId: USER, quantity: 4, idempotencyKey: 'k1', source: LOCAL_SOURCE });
    await expect(overLimit).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
    const afterLimit = await itemState(itemId);
    await reserve({ itemId, userId: 8, quantity: 3, idempotencyKey: 'k2', source: LOCAL_SOURCE });
    await reserve({ itemId, userId: 9, quantity: 3, idempotencyKey: 'k3', source: LOCAL_SOURCE });
    await reserve({ itemId, userId: 10, quantity: 3, idempotencyKey: 'k4', source: LOCAL_SOURCE });
    const overStock = reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k5', source: LOCAL_SOURCE });
    await expect(overStock).rejects.toMatchObject({ code: 'SOLD_OUT' });

    expect(afterLimit).toEqual({ stock: 10, bought: {}, pending: 0, idempotency: 0 });
    expect(await itemState(itemId)).toEqual({ stock: 1, bought: { 8: '3', 9: '3', 10: '3' }, pending: 3, idempotency: 0 });
  });

  it('refuses more than the stock to a buyer who has bought, keeping their count, and the limit first when both are past', async () => {
    const itemId = await saleOf(3, 3);
    await reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'k1', source: LOCAL_SOURCE });
    await reserve({ itemId, userId: 8, quantity: 1, idempotencyKey: 'k2', source: LOCAL_SOURCE });
    const before = await itemState(itemId);

    const overStock = reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k3', source: LOCAL_SOURCE });
    await expect(overStock).rejects.toMatchObject({ code: 'SOLD_OUT' });
    const overBoth = reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k4', source: LOCAL_SOURCE });
    await expect(overBoth).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });

    expect(before).toMatchObject({ stock: 1, bought: { [USER]: '1', 8: '1' } });
    expect(await itemState(itemId)).toEqual(before);
  });

  it('fails before counting the buyer when the sale has lost its per-buyer limit', async () => {
    const itemId = uniqueItemId('script');
    await redis().hset(itemKeys(itemId).state, 'stock', 5);

    await expect(reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'k1', source: LOCAL_SOURCE })).rejects.toThrow(/no per-buyer limit/);

    expect(await itemState(itemId)).toEqual({ stock: 5, bought: {}, pending: 0, idempotency: 0 });
  });

  it('refuses more than the remaining stock, and writes no key at all once stock is 0', async () => {
    const itemId = await saleOf(2);
    await expect(reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k1', source: LOCAL_SOURCE })).rejects.toMatchObject({ code: 'SOLD_OUT' });
    await reserve({ itemId, userId: USER, quantity: 2, idempotencyKey: 'k2', source: LOCAL_SOURCE });
    const keysBefore = (await keysMatching(`{item:${itemId}}*`)).sort();

    await expect(reserve({ itemId, userId: 99, quantity: 1, idempotencyKey: 'k3', source: LOCAL_SOURCE })).rejects.toMatchObject({ code: 'SOLD_OUT' });

    expect((await keysMatching(`{item:${itemId}}*`)).sort()).toEqual(keysBefore);
    expect(await remainingStock(itemId)).toBe(0);
  });

  it('answers NOT_ON_SALE for an item without a sale', async () => {
    await expect(reserve({ itemId: uniqueItemId(), userId: USER, quantity: 1, idempotencyKey: 'k', source: LOCAL_SOURCE })).rejects.toMatchObject({
      code: 'NOT_ON_SALE',
    });
  });
});

describe('order-release', () => {
  it('restores stock and the buyer, forgets the key, never twice, and a second run reports what the first did', async () => {
    const itemId = await saleOf(10);
    const { record } = await reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k1', source: LOCAL_SOURCE });

    const first = await release(record);
    const second = await release(record);

    // ioredis sends a release again when its reply was lost: that run must not give stock back twice.
    expect([first, second]).toEqual([1, 1]);
    expect(await itemState(itemId)).toEqual({ stock: 10, bought: {}, pending: 0, idempotency: 0 });
  });

  it('gives nothing back for an order Redis no longer holds', async () => {
    const itemId = await saleOf(10);
    const { record } = await reserve({ itemId, userId: USER, quantity: 3, idempotencyKey: 'k1', source: LOCAL_SOURCE });
    await redis().hdel(itemKeys(itemId).outbox, record.orderId);

    expect(await release(record)).toBe(0);
    expect(await itemState(itemId)).toMatchObject({ stock: 7 });
  });
});

describe('sale-open', () => {
  it('refuses to reset a sale that has reservations', async () => {
    const itemId = await saleOf(10);
    await reserve({ itemId, userId: USER, quantity: 1, idempotencyKey: 'a', source: LOCAL_SOURCE });

    await expect(openSale(itemId, 50, 5)).rejects.toMatchObject({ code: 'SALE_STARTED' });
    expect(await remainingStock(itemId)).toBe(9);
  });
});

describe('keys', () => {
  it('share one hash tag per item, so each script runs in one cluster slot', () => {
    const keys = itemKeys('abc');
    const all = [keys.state, keys.buyers, keys.outbox, keys.idempotency(1, 'k'), keys.released('o')];

    for (const key of all) expect(/\{([^}]*)\}/.exec(key)![1]).toBe('item:abc');
  });
});
