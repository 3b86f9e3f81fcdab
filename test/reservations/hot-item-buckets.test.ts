import { spawnSync } from 'node:child_process';
import slotOf from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { orders } from '../../shared/sale/orders/kind';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { itemBuckets, itemKeys, type OrderRecord } from '../../shared/sale/orders/model';
import { openSale, remainingStock, reserve } from '../../shared/sale/orders/sale';
import { bucketOf, bucketTags, refill } from '../../shared/reservations/buckets';
import { reconcileOwner } from '../../shared/reservations/reconcile';
import { writeReservations } from '../../shared/reservations/writer';
import { httpEvent, lambdaContext } from '../support/events';
import { beforeReservingAgain, reserveAsClient } from '../support/hot-item';
import { falseSoldOut, type Answer } from '../../load/support/false-sold-out';
import { getOrderEvent, orderEvent } from '../support/order-events';
import { signedInUsers } from '../support/sessions';
import { orderRows, soldCount, uniqueItemId } from '../support/orders';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';
import { route } from '../support/routes';

const createOrder = await route('create-order');
const getItem = await route('get-item');
const getOrder = await route('get-order');
const putItemStock = await route('put-item-stock');

const look = { relayOlderThanMs: Number.POSITIVE_INFINITY, repair: false };
const repair = { ...look, repair: true };

async function splitItem(stock: number, buckets: number) {
  const itemId = uniqueItemId('hot');
  await upsertItemStock(itemId, stock, 1, buckets);
  await openSale(itemId, stock, 1, buckets);
  return itemId;
}

/** Buyer ids from `first` on whose bucket (of `buckets`) is `bucket`. */
function buyersOf(bucket: number, buckets: number, count: number, first = 1): number[] {
  const found: number[] = [];
  for (let id = first; found.length < count; id++) if (bucketOf(id, buckets) === bucket) found.push(id);
  return found;
}

const stocks = async (itemId: string, buckets: number) =>
  Promise.all(itemBuckets(itemId, buckets).map(async (b) => Number(await redis().hget(b.state, 'stock'))));

describe('one hot item in buckets', () => {
  it("puts 3 buckets one on each master of an evenly split cluster, and keeps one bucket on the item's own keys", () => {
    // redis-cli --cluster create's ranges for 3 masters
    const masters = [
      [0, 5460],
      [5461, 10922],
      [10923, 16383],
    ] as const;
    const masterOf = (tag: string) => masters.findIndex(([low, high]) => slotOf(tag) >= low && slotOf(tag) <= high);

    for (const item of ['sneaker', 'a', 'demo-item', uniqueItemId()]) expect(bucketTags(`item:${item}`, 3).map(masterOf)).toEqual([0, 1, 2]);
    expect(new Set(bucketTags('item:sneaker', 16).map((tag) => Math.floor(slotOf(tag) / 1024)))).toEqual(new Set(Array.from({ length: 16 }, (_, k) => k)));
    expect(bucketTags('item:sneaker', 1)).toEqual(['{item:sneaker}']);
  });

  it('opens a sale in buckets through PUT /items/{id}/stock, refuses a count out of 1..16, and answers an order and the item summed over the buckets', async () => {
    // Prepare
    const [admin, buyer] = [...(await signedInUsers(1, 'admin')), ...(await signedInUsers(1))];
    const itemId = uniqueItemId('hot-http');
    const put = (body: unknown) =>
      putItemStock(
        httpEvent('post-sessions', { method: 'PUT', path: `/items/${itemId}/stock`, pathParameters: { itemId }, cookies: [admin!.cookie], body }),
        lambdaContext(),
      );
    const item = async () =>
      JSON.parse((await getItem(httpEvent('get-me', { method: 'GET', path: `/items/${itemId}`, pathParameters: { itemId } }), lambdaContext())).body!);

    // Act
    const refused = [await put({ quantity: 9, perUserLimit: 1, buckets: 0 }), await put({ quantity: 9, perUserLimit: 1, buckets: 17 })];
    const whole = await put({ quantity: 9, perUserLimit: 1 });
    const split = await put({ quantity: 9, perUserLimit: 1, buckets: 3 });
    const [opened, wholeKeyLeft] = [await stocks(itemId, 3), await redis().exists(`{item:${itemId}}:sale`)];
    const placed = await createOrder(orderEvent(itemId, buyer!.cookie, 'hot-1', { quantity: 1 }), lambdaContext());
    const order = await getOrder(getOrderEvent(JSON.parse(placed.body!).orderId, buyer!.cookie), lambdaContext());

    // Assess
    expect(refused.map((r) => r.statusCode)).toEqual([400, 400]);
    expect(JSON.parse(whole.body!)).toMatchObject({ remaining: 9, buckets: 1 });
    expect(JSON.parse(split.body!)).toMatchObject({ remaining: 9, buckets: 3 });
    expect(opened).toEqual([3, 3, 3]);
    expect(wholeKeyLeft).toBe(0);
    expect(placed.statusCode).toBe(202);
    expect(JSON.parse(order.body!)).toMatchObject({ itemId, status: 'pending' });
    expect(await item()).toMatchObject({ initialStock: 9, remaining: 8, buckets: 3 });
  });

  it('splits the stock over the buckets, and a dry bucket takes units from the others before anyone is told SOLD_OUT', async () => {
    const itemId = await splitItem(7, 3);
    const buyers = buyersOf(0, 3, 8);

    const answers = [];
    for (const buyer of buyers)
      answers.push(
        await reserve({ itemId, userId: buyer, quantity: 1, idempotencyKey: 'k', source: LOCAL_SOURCE }).then(
          () => 'reserved',
          (e: { code: string }) => e.code,
        ),
      );

    expect(answers).toEqual([...Array(7).fill('reserved'), 'SOLD_OUT']);
    expect(await stocks(itemId, 3)).toEqual([0, 0, 0]);
    expect(await remainingStock(itemId)).toBe(0);
    expect(await reconcileOwner(orders, itemId, look)).toMatchObject({ capacity: 7, remaining: 0, pending: 7, moving: 0, drift: 0 });
  });

  it('counts a move interrupted between its two steps as remaining, tells no buyer SOLD_OUT while it is in flight, and the next buyer finishes it', async () => {
    // Prepare: 1 unit, in bucket 0 of 3; a buyer of bucket 2 starts a move of it and dies between
    // the move's steps. The last unit is then in the move.
    const itemId = await splitItem(1, 3);
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/reserve-in-child.ts', itemId, String(buyersOf(2, 3, 1)[0])], {
      env: { ...process.env, SURGE_FAULTS: 'move-between-steps:1' },
      encoding: 'utf8',
    });
    const inFlight = await reconcileOwner(orders, itemId, look);
    const remaining = await remainingStock(itemId);

    // Act: a buyer of bucket 0, which gave its unit to the move, asks for it; then another.
    const last = await reserve({ itemId, userId: buyersOf(0, 3, 1)[0]!, quantity: 1, idempotencyKey: 'k', source: LOCAL_SOURCE });
    const late = await reserve({ itemId, userId: buyersOf(1, 3, 1)[0]!, quantity: 1, idempotencyKey: 'k', source: LOCAL_SOURCE }).catch(
      (e: { code: string }) => e.code,
    );

    // Assess
    expect(child.signal).toBe('SIGKILL');
    expect(inFlight).toMatchObject({ remaining: 0, moving: 1, pending: 0, drift: 0 });
    expect(remaining).toBe(1);
    expect(last.replayed).toBe(false);
    expect(late).toBe('SOLD_OUT');
    expect(await reconcileOwner(orders, itemId, look)).toMatchObject({ remaining: 0, moving: 0, pending: 1, drift: 0 });
  });

  it('finishes in repair the moves whose process died between their steps, once, however many repairs run', async () => {
    // Prepare: 2 units in buckets [1, 1, 0]; a buyer of the empty one dies half-way through moves from both others.
    const itemId = await splitItem(2, 3);
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/reserve-in-child.ts', itemId, String(buyersOf(2, 3, 1)[0])], {
      env: { ...process.env, SURGE_FAULTS: 'move-between-steps:1' },
      encoding: 'utf8',
    });
    const before = await stocks(itemId, 3);

    // Act
    const repairs = await Promise.all([reconcileOwner(orders, itemId, repair), reconcileOwner(orders, itemId, repair)]);

    // Assess
    expect(child.signal).toBe('SIGKILL');
    expect(before).toEqual([0, 0, 0]);
    // Each repair saw the units in the moves or already taken in (the other finished them first), never lost or twice.
    expect(repairs.map((r) => r!.drift)).toEqual([0, 0]);
    expect(Math.max(...repairs.map((r) => r!.moving))).toBe(2);
    expect(repairs.reduce((sum, r) => sum + r!.movesFinished, 0)).toBeGreaterThanOrEqual(2);
    expect(await stocks(itemId, 3)).toEqual([0, 0, 2]);
    expect(await reconcileOwner(orders, itemId, look)).toMatchObject({ remaining: 2, moving: 0, drift: 0, adjusted: 0 });
  });

  it('reserves for a buyer the unit its own refill moved, though a buyer of another bucket refills from its bucket before each of its reservations', async () => {
    // Prepare: 1 unit, in bucket 0 of 2, and a buyer of bucket 1. Each time that buyer's refill
    // has moved the unit, a buyer of bucket 0 (dry since) refills from bucket 1 before the first
    // buyer reserves: what many buyers at once do now and then, here every time.
    const itemId = await splitItem(1, 2);
    const buyer = buyersOf(1, 2, 1)[0]!;
    let drains = 0;
    const undo = beforeReservingAgain(itemKeys(itemId, 1, 2).idempotency(buyer, 'drained'), async () => {
      drains += 1;
      await refill(itemId, itemBuckets(itemId, 2), 0, 1);
    });

    // Act
    const answer = await reserve({ itemId, userId: buyer, quantity: 1, idempotencyKey: 'drained', source: LOCAL_SOURCE })
      .then(
        () => 'reserved',
        (e: { code: string }) => e.code,
      )
      .finally(undo);

    // Assess
    expect(drains).toBeGreaterThan(0);
    expect(answer).toBe('reserved');
    expect(await stocks(itemId, 2)).toEqual([0, 0]);
    expect(await reconcileOwner(orders, itemId, look)).toMatchObject({ remaining: 0, moving: 0, pending: 1, drift: 0 });
  });

  it('tells no buyer SOLD_OUT before the last unit is reserved, with many buyers at once and most of them in one bucket', async () => {
    // Prepare: 300 units in 3 buckets; 900 buyers of one unit each, 60 % of them in bucket 0, so
    // it runs dry long before the others, which then run dry too as it takes their units.
    const stock = 300;
    const itemId = await splitItem(stock, 3);
    const skewed = [...buyersOf(0, 3, 540), ...buyersOf(1, 3, 180, 100_000), ...buyersOf(2, 3, 180, 200_000)];
    const buyers = skewed
      .map((id, i) => ({ id, order: (i * 7919) % skewed.length }))
      .sort((a, b) => a.order - b.order)
      .map((b) => b.id);

    // Act: 60 in flight at a time, each buyer asking again as a client does when Redis answered too late.
    const answers: Answer[] = [];
    const records: OrderRecord[] = [];
    let retried = 0;
    const next = buyers[Symbol.iterator]();
    await Promise.all(
      Array.from({ length: 60 }, async () => {
        for (let step = next.next(); !step.done; step = next.next()) {
          const startedAt = performance.now();
          const answer = await reserveAsClient({ itemId, userId: step.value, quantity: 1, idempotencyKey: 'k', source: LOCAL_SOURCE });
          answers.push({ startedAt, answeredAt: performance.now(), outcome: answer.outcome });
          if (answer.record) records.push(answer.record);
          retried += answer.retried;
        }
      }),
    );
    await writeReservations(orders, records);

    // Assess
    expect(answers.filter((a) => a.outcome === 'reserved')).toHaveLength(stock);
    expect(new Set(answers.map((a) => a.outcome)), `asked again ${retried} times after Redis answered too late`).toEqual(new Set(['reserved', 'SOLD_OUT']));
    expect(falseSoldOut(answers)).toBe(0);
    expect(await soldCount(itemId)).toBe(stock);
    expect((await orderRows(itemId)).filter((r) => r.status === 'confirmed')).toHaveLength(stock);
    expect(await reconcileOwner(orders, itemId, look)).toMatchObject({ remaining: 0, moving: 0, pending: 0, confirmed: stock, drift: 0 });
  });
});
