import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/clients/redis';
import { upsertItemStock } from '../../shared/orders/items';
import { HandOffMessage } from '../../shared/handoff/message';
import { itemKeys, type OrderRecord } from '../../shared/orders/model';
import { openSale, remainingStock, reserve } from '../../shared/orders/reservations';
import { writeOrders } from '../../shared/orders/writer';
import { uniqueItemId } from '../support/orders';
import { ownOrderQueue, testSqs } from '../support/queues';
import { reconcileItem } from '../../shared/orders/reconcile';

const sqs = testSqs();
const queue = await ownOrderQueue(sqs);

const report = { relayOlderThanMs: 60_000, repairCounters: false };

async function saleWith(stock: number, reservations: number, perUserLimit = 10) {
  const itemId = uniqueItemId('recon');
  await upsertItemStock(itemId, stock, perUserLimit);
  await openSale(itemId, stock, perUserLimit);
  const orders: OrderRecord[] = [];
  for (let i = 0; i < reservations; i++) orders.push((await reserve({ itemId, userId: 500 + i, quantity: 2, idempotencyKey: `r${i}` })).order);
  return { itemId, orders };
}

describe('reconciliation', () => {
  it('finds no drift when every unit is remaining, confirmed or pending', async () => {
    const { itemId, orders } = await saleWith(10, 3);
    await writeOrders(orders.slice(0, 2));

    expect(await reconcileItem(itemId, report)).toMatchObject({ initial: 10, remaining: 4, confirmed: 4, pending: 2, drift: 0, relayed: 0 });
  });

  it('relays an order whose send was lost, so the writer stores it', async () => {
    // Prepare: reserved, but never sent.
    const { itemId, orders } = await saleWith(10, 1);

    // Act
    const result = await reconcileItem(itemId, { relayOlderThanMs: 0, repairCounters: false });
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 2 }));
    await writeOrders((Messages ?? []).flatMap((m) => HandOffMessage.parse(JSON.parse(m.Body!)).orders));

    // Assess
    expect(result).toMatchObject({ relayed: 1, drift: 0 });
    expect(Messages?.flatMap((m) => HandOffMessage.parse(JSON.parse(m.Body!)).orders.map((o) => o.orderId))).toEqual([orders[0]!.orderId]);
    expect(await reconcileItem(itemId, report)).toMatchObject({ confirmed: 2, pending: 0, drift: 0 });
  });

  it('reports a drifted counter and resets it only on request', async () => {
    const { itemId } = await saleWith(10, 1);
    await redis().hset(itemKeys(itemId).sale, 'stock', 11);

    const seen = await reconcileItem(itemId, report);
    const repaired = await reconcileItem(itemId, { ...report, repairCounters: true });

    expect(seen).toMatchObject({ remaining: 11, pending: 2, drift: -3, counterReset: false });
    expect(repaired).toMatchObject({ drift: -3, counterReset: true });
    expect(await remainingStock(itemId)).toBe(8);
    expect(await reconcileItem(itemId, report)).toMatchObject({ drift: 0 });
  });

  it('raises buyers’ counts that Redis lost back to their confirmed orders, and lowers none', async () => {
    // Prepare: three buyers of 2 each (limit 3 per buyer); two stored in MySQL, one still pending.
    // Redis then loses the first buyer's count and the pending buyer's, as after a failover that
    // dropped writes.
    const { itemId, orders } = await saleWith(100, 3, 3);
    await writeOrders(orders.slice(0, 2));
    const [stored, kept, pending] = orders.map((o) => String(o.userId));
    await redis().hdel(itemKeys(itemId).bought, stored!, pending!);
    await redis().hset(itemKeys(itemId).bought, kept!, 5);

    // Act
    const seen = await reconcileItem(itemId, report);
    const repaired = await reconcileItem(itemId, { ...report, repairCounters: true });
    await writeOrders(orders.slice(2));
    const repairedOnceWritten = await reconcileItem(itemId, { ...report, repairCounters: true });

    // Assess: the pending buyer is raised only once their order is confirmed.
    expect(seen).toMatchObject({ buyersRaised: 0 });
    expect(repaired).toMatchObject({ buyersRaised: 1 });
    expect(repairedOnceWritten).toMatchObject({ buyersRaised: 1, drift: 0 });
    expect(await redis().hgetall(itemKeys(itemId).bought)).toEqual({ [stored!]: '2', [kept!]: '5', [pending!]: '2' });
    await expect(reserve({ itemId, userId: Number(stored), quantity: 2, idempotencyKey: 'past-limit' })).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
  });
});
