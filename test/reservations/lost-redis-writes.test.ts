import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as writeReservations } from '../../functions/write-reservations';
import { redis } from '../../shared/platform/clients/redis';
import { issueCoupon, setDealState } from '../../shared/coupons/coupons';
import { upsertDeal } from '../../shared/coupons/deals';
import { dealKeys } from '../../shared/coupons/model';
import { encodeHandOffs, type HandOff } from '../../shared/reservations/hand-off';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { itemKeys } from '../../shared/sale/orders/model';
import { openSale, reserve } from '../../shared/sale/orders/sale';
import { fixture, lambdaContext } from '../support/events';
import { sql, uniqueItemId } from '../support/orders';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';

const HOUR = 3_600_000;

function sqsEventFor(handOffs: HandOff[]): SQSEvent {
  const template = fixture<SQSEvent>('sqs/order-records.json').Records[0]!;
  return { Records: handOffs.map((handOff, i) => ({ ...template, messageId: `m-${i}`, body: encodeHandOffs([handOff]) })) };
}

/**
 * A Multi-AZ failover under asynchronous replication, or a restart from an AOF fsynced a second
 * ago, undoes the last writes: here, everything the reservation wrote. Its message was sent and
 * the client told 202, so the writer must store it all the same.
 */
describe('an acknowledged reservation whose Redis writes were lost', () => {
  it('is stored as an order', async () => {
    // Prepare
    const itemId = uniqueItemId('lost');
    await upsertItemStock(itemId, 10, 1);
    await openSale(itemId, 10, 1);
    const before = await redis().hgetall(itemKeys(itemId).state);
    const { record: order } = await reserve({ itemId, userId: 7, quantity: 1, idempotencyKey: 'k', source: LOCAL_SOURCE });
    const keys = itemKeys(itemId);
    await redis().multi().hset(keys.state, before).del(keys.buyers, keys.outbox, keys.idempotency(7, 'k')).exec();

    // Act
    const result = await writeReservations(sqsEventFor([{ kind: 'orders', record: order }]), lambdaContext());

    // Assess
    expect(result.batchItemFailures).toEqual([]);
    expect(await sql('SELECT status FROM orders WHERE id = ?', [order.orderId])).toEqual([{ status: 'confirmed' }]);
  });

  it('is stored as a coupon', async () => {
    const dealId = uniqueItemId('lost-deal');
    const now = Date.now();
    await upsertDeal({ id: dealId, title: 'Lost', opensAt: now - HOUR, closesAt: now + HOUR, limit: 10 });
    await setDealState(dealId, now - HOUR, now + HOUR, 10);
    const { record: coupon } = await issueCoupon(dealId, 7, LOCAL_SOURCE);
    const keys = dealKeys(dealId);
    await redis().multi().hset(keys.state, 'issued', 0).del(keys.buyers, keys.outbox).exec();

    const result = await writeReservations(sqsEventFor([{ kind: 'coupons', record: coupon }]), lambdaContext());

    expect(result.batchItemFailures).toEqual([]);
    expect(await sql('SELECT user_id FROM coupons WHERE id = ?', [coupon.couponId])).toEqual([{ user_id: 7 }]);
  });
});
